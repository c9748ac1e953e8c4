// Pure parsing of `layover run` arguments (unit-tested; touches nothing).
#pragma once
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "helper/sandbox/limits/limits.h"

struct RunOptions {
    std::string target;                // as given (resolved later); empty: $HOME
    std::string session;               // empty: a fresh generated name
    std::string on_exit;               // keep|discard|prompt|apply|save:FILE; empty: prompt on a tty, else keep
    std::string network = "loopback";  // loopback|none|host
    std::string tmp_size;              // empty: default
    int ipc_fd = -1;                   // passed to the command as fd 3
    std::vector<std::string> command;  // empty: $SHELL or /bin/sh
    bool help = false;
    Limits limits;
    bool quiet = false;       // no informational lines on stderr
    bool keep_empty = false;  // --keep-empty: keep a session that ended with no changes
    std::string label;        // --label TEXT (hidden): what `sessions` shows instead of the command
    // The isolation profile (helper/sandbox/policy/profile.h, hide.h).
    bool hide_secrets = true;           // --no-hide-secrets turns it off
    std::vector<std::string> hide;      // --hide PATH
    bool env_clear = false;             // --env-clear
    std::vector<std::string> env_keep;  // --env-keep GLOB
    std::vector<std::string> env_set;   // --env NAME=VALUE
    // First-run comfort (helper/sandbox/policy/first_run.h).
    std::string cwd;              // --cwd DIR; empty: the caller's, if inside the target
    std::vector<std::string> ro;  // --ro PATH: host path shown read-only at the same path
    std::vector<std::string> rw;  // --rw PATH: host path writable, pass-through, never captured
    bool wait = false;            // --wait: wait for background processes at exit
    int max_steps = 64;           // --max-steps N: the stack's depth limit (steps::kMaxDepth)
    bool home_scratch = true;     // --home scratch (default) | ro: writes outside the target (scratch.h)
    // Resource limits as given (parsed into Limits by parse_run_args).
    std::string timeout, max_pids, max_size, max_memory, min_free;
    disk_floor::Spec min_free_spec;  // --min-free; resolved against the filesystem by prepare_run
};

// Errors are usage errors (run exits 125 for them).
base::Result<RunOptions> parse_run_args(const std::vector<std::string>& args);

// Validate an --on-exit value; returns an error message or "".
std::string check_on_exit(const std::string& mode);

extern const char kRunUsage[];
