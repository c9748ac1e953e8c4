// Turning `run` options into a checked plan: resolve the target, open or
// create the session (locked), and fill in what the sandbox needs.
#pragma once
#include <string>

#include "helper/base/fd.h"
#include "helper/sandbox/common/sandbox.h"
#include "helper/sandbox/limits/memcg.h"
#include "helper/sandbox/policy/run_args.h"
#include "helper/sandbox/prepare/discard.h"
#include "helper/sandbox/prepare/run_signals.h"
#include "helper/sandbox/prepare/upper_flush.h"
#include "helper/store/layers/steps.h"
#include "helper/store/session/session.h"

struct PreparedRun {
    SandboxPlan plan;
    session::Meta meta;
    std::string session_dir;
    base::Fd lock;         // held while the session runs
    bool created = false;  // this run created the session
    // A new session's dirs (and its lock) are not made yet: supervise()
    // makes them (make_session_dirs) while setup makes the namespaces.
    bool dirs_pending = false;
    // Informational stderr lines (what is hidden, which variables were
    // dropped), printed by the verb unless --quiet.
    std::vector<std::string> notices;
    memcg::Scope memory;      // --max-memory's cgroup, if any: removed at the end of the run
    bool keep_empty = false;  // --keep-empty: finish_run keeps a session with no changes
    bool quiet = false;       // --quiet: finish_run's informational lines are left out
    // Discarding, non-interactive, no memory cgroup: supervise() returns on
    // init's status [sync 6] and leaves the namespaces' teardown running;
    // `teardown` is then a pidfd of the exiting setup process, which the
    // background removal waits for (helper/sandbox/prepare/discard.h).
    bool exit_early = false;
    base::Fd teardown;
    // --on-exit discard: supervise() forks the remover while the sandbox
    // starts, and the exit hands the session to it (helper/sandbox/prepare/discard.h).
    bool discarding = false;
    Remover remover;
    base::Fd child_mnt;      // [sync 7] the child's mount namespace, handed to the remover
    steps::Live live;        // the live step's label and start (steps/live.json)
    int64_t started_ns = 0;  // CLOCK_REALTIME when the run began (the live step's start)
    // CLOCK_REALTIME_COARSE then: the clock a file's ctime comes from, which
    // lags CLOCK_REALTIME by up to a tick, so that a file the command wrote
    // in its first tick never reads as an earlier run's (scratch::summarize).
    int64_t started_coarse_ns = 0;
    int max_steps = steps::kMaxDepth;  // --max-steps: a live checkpoint squashes past it
    // Not discarding: the upper layer's flush, started by supervise() once
    // the session dir exists; its final syncfs runs at the exit.
    UpperFlush flush;
    run_signals::Gate signals;  // blocked since run's first instruction (helper/sandbox/prepare/run_signals.h)
};

base::Result<PreparedRun> prepare_run(const RunOptions& opts);

// A new session's dir, locked, with its upper, work and scratch layers: made
// by supervise() once setup is forked. A no-op for a resumed session.
base::Result<void> make_session_dirs(PreparedRun& run);

// meta.json (status running) and steps/live.json: supervise() writes them
// once setup is forked, so that their inode creations overlap its set-up.
base::Result<void> write_start_records(const PreparedRun& run);

// Resolve a target directory: absolute, symlink-free, an existing directory,
// and not one the sandbox replaces (/, /proc, /sys, /dev).
base::Result<std::string> resolve_target(const std::string& given);
