#include "helper/sandbox/policy/run_args.h"

#include <cstdlib>

#include "helper/base/suggest.h"
#include "helper/base/text.h"
#include "helper/sandbox/policy/profile.h"

const char kRunUsage[] =
    "usage: layover run [--target DIR] [--session NAME] [--on-exit MODE] [--network MODE]\n"
    "                   [--hide PATH]... [--no-hide-secrets] [--env-keep GLOB]... [--env NAME=VALUE]...\n"
    "                   [--env-clear] [--cwd DIR] [--ro PATH]... [--rw PATH]... [--wait] [--home MODE]\n"
    "                   [--timeout DURATION] [--max-pids N] [--max-size SIZE] [--max-memory SIZE]\n"
    "                   [--min-free SIZE] [--tmp-size SIZE] [--ipc-fd N] [--keep-empty] [--quiet] [--max-steps N]\n"
    "                   [--] [CMD [ARG...]]\n"
    "  --target DIR      tree to overlay (default: $HOME)\n"
    "  --session NAME    name the session, or resume a kept one ([A-Za-z0-9._-]{1,64}, not starting with -)\n"
    "  --on-exit MODE    prompt|keep|discard|apply|save:FILE (default: prompt on a tty, else keep)\n"
    "  --network MODE    loopback (default: own network, lo up), none (no interface up)\n"
    "                    or host (the host's network)\n"
    "  --hide PATH       make PATH unreadable inside (repeatable)\n"
    "  --no-hide-secrets show ~/.ssh, ~/.aws, ~/.gnupg... (hidden by default: --hide-secrets)\n"
    "  --env-keep GLOB   keep variables the default drops as secrets (repeatable; e.g. GITHUB_TOKEN)\n"
    "  --env NAME=VALUE  set a variable inside (repeatable)\n"
    "  --env-clear       start from PATH HOME TERM LANG LC_* USER SHELL TZ only\n"
    "  --cwd DIR         start the command in DIR (default: the current dir if inside the target,\n"
    "                    else the target)\n"
    "  --ro PATH         show a host path read-only inside, at the same path (e.g. a file in /tmp)\n"
    "  --rw PATH         make a host path writable inside: writes are real and never captured\n"
    "  --wait            at exit, wait for background processes instead of killing them\n"
    "  --home MODE       scratch (default: $HOME and XDG dirs outside the target are writable,\n"
    "                    kept apart and never applied) or ro (read-only)\n"
    "  --timeout DURATION  stop the whole sandbox after DURATION (90s, 5m, 2h, 1d; default 24h;\n"
    "                    none: no limit); the session is kept and run exits 124\n"
    "  --max-pids N      processes and threads inside (default 4096; per user namespace on Linux\n"
    "                    5.14+, so a fork bomb cannot starve the host user)\n"
    "  --max-size SIZE   cap the upper layer (e.g. 2G; default none), measured every 25-250 ms:\n"
    "                    past it the sandbox stops, the session is kept, run exits 125\n"
    "  --max-memory SIZE memory limit (default none). Over the whole sandbox only where you\n"
    "                    delegated a cgroup v2 to layover alone ('systemd-run --user --scope\n"
    "                    -p Delegate=yes layover run ...'); elsewhere per process (RLIMIT_AS),\n"
    "                    so several processes together may use more; run says which\n"
    "  --min-free SIZE   free space to leave on the state dir's filesystem (e.g. 1G, 2%; default 5%\n"
    "                    of it, 256M-1G; none: no floor): run refuses to start below it, and\n"
    "                    past it the sandbox stops, the session is kept, run exits 125; with it\n"
    "                    an inode floor (5% of the filesystem's inodes, 10000-1000000; none\n"
    "                    turns both off)\n"
    "  --tmp-size SIZE   size of the private /tmp, /var/tmp, /dev/shm (e.g. 512M, 2G, 10%)\n"
    "  --ipc-fd N        pass fd N into the command as fd 3 (LAYOVER_IPC_FD=3)\n"
    "  --keep-empty      keep the session even when the command changed nothing (by default such\n"
    "                    a session is removed at exit, with one line saying so)\n"
    "  -q, --quiet       no informational lines (what is hidden, which variables are dropped)\n"
    "  --max-steps N     the deepest stack of frozen steps a resumed session keeps (default 64,\n"
    "                    2-400); past it the oldest two steps are squashed into one layer\n";

std::string check_on_exit(const std::string& m) {
    if (m == "prompt" || m == "keep" || m == "discard" || m == "apply") return "";
    if (m.rfind("save:", 0) == 0) {
        if (m.size() == 5) return "--on-exit save:FILE needs a file name, e.g. save:work.tar.zst";
        return "";
    }
    // A mistyped mode gets the one it likely meant, as a mistyped flag does
    // ("save" before a ':' or '=' too: sav:FILE, save=FILE).
    size_t cut = m.find_first_of(":=");
    std::string word = m.substr(0, cut);
    std::string near =
        word == "save" ? "save" : base::nearest_name(word, {"prompt", "keep", "discard", "apply", "save"});
    std::string hint;
    if (near == "save")
        hint =
            " (did you mean 'save:" + (cut == std::string::npos || cut + 1 == m.size() ? "FILE" : m.substr(cut + 1)) +
            "'?)";
    else if (!near.empty() && cut == std::string::npos) hint = " (did you mean '" + near + "'?)";
    return "unknown --on-exit mode '" + base::display_path(m) + "'" + hint +
           "; use prompt, keep, discard, apply or save:FILE";
}

base::Result<RunOptions> parse_run_args(const std::vector<std::string>& args) {
    RunOptions o;
    size_t i = 0;
    auto value = [&](const std::string& flag, std::string* out) -> base::Result<void> {
        // Accept both "--flag VALUE" and "--flag=VALUE".
        const std::string& a = args[i];
        if (a.size() > flag.size() && a[flag.size()] == '=') {
            *out = a.substr(flag.size() + 1);
        } else if (i + 1 < args.size()) {
            *out = args[++i];
        } else {
            return base::error(flag + " needs a value");
        }
        return base::Ok();
    };
    auto is = [&](const std::string& flag) {
        const std::string& a = args[i];
        return a == flag || (a.rfind(flag + "=", 0) == 0);
    };
    for (; i < args.size(); i++) {
        const std::string& a = args[i];
        if (a == "--") {
            i++;
            break;
        }
        if (a.empty() || a[0] != '-') break;
        if (a == "-h" || a == "--help") {
            o.help = true;
        } else if (is("--target")) {
            TRY_VOID(value("--target", &o.target));
            if (o.target.empty()) return base::error("--target needs a directory");
        } else if (is("--session")) {
            TRY_VOID(value("--session", &o.session));
            if (!base::valid_session_name(o.session))
                return base::error("invalid --session name '" + base::display_path(o.session) +
                                   "': use 1-64 of A-Z a-z 0-9 . _ -, not starting with -");
        } else if (is("--on-exit")) {
            TRY_VOID(value("--on-exit", &o.on_exit));
            std::string err = check_on_exit(o.on_exit);
            if (!err.empty()) return base::error(err);
            // save:~/work.tar.zst: no shell expands a '~' after "save:".
            if (o.on_exit.rfind("save:", 0) == 0)
                o.on_exit = "save:" + base::expand_home(o.on_exit.substr(5), std::getenv("HOME"));
        } else if (is("--network")) {
            TRY_VOID(value("--network", &o.network));
            if (o.network != "loopback" && o.network != "none" && o.network != "host")
                return base::error("unknown --network '" + o.network + "'; use loopback, none or host");
        } else if (a == "-q" || a == "--quiet") {
            o.quiet = true;
        } else if (a == "--keep-empty") {
            o.keep_empty = true;
        } else if (is("--label")) {
            TRY_VOID(value("--label", &o.label));
            if (o.label.size() > 200 || o.label.find('\n') != std::string::npos)
                return base::error("--label takes one line of at most 200 bytes");
        } else if (a == "--hide-secrets") {
            o.hide_secrets = true;
        } else if (a == "--no-hide-secrets") {
            o.hide_secrets = false;
        } else if (is("--hide")) {
            std::string v;
            TRY_VOID(value("--hide", &v));
            if (v.empty()) return base::error("--hide needs a path, e.g. --hide ~/.config/secret");
            o.hide.push_back(v);
        } else if (is("--cwd")) {
            TRY_VOID(value("--cwd", &o.cwd));
            if (o.cwd.empty()) return base::error("--cwd needs a directory");
        } else if (is("--ro") || is("--rw")) {
            bool rw = is("--rw");
            std::string v;
            TRY_VOID(value(rw ? "--rw" : "--ro", &v));
            if (v.empty()) return base::error(std::string(rw ? "--rw" : "--ro") + " needs a path");
            (rw ? o.rw : o.ro).push_back(v);
        } else if (is("--timeout")) {
            TRY_VOID(value("--timeout", &o.timeout));
            if (!limits::parse_duration(o.timeout, &o.limits.timeout_ms))
                return base::error("bad --timeout '" + o.timeout + "'; use e.g. 90s, 5m, 2h, 1d or none");
        } else if (is("--max-steps")) {
            std::string v;
            TRY_VOID(value("--max-steps", &v));
            char* end = nullptr;
            unsigned long n = std::strtoul(v.c_str(), &end, 10);
            if (v.empty() || *end || v[0] == '-' || n < 2 || n > 400)
                return base::error("bad --max-steps '" + v + "'; use a number from 2 to 400");
            o.max_steps = static_cast<int>(n);
        } else if (is("--max-pids")) {
            TRY_VOID(value("--max-pids", &o.max_pids));
            char* end = nullptr;
            unsigned long long n = std::strtoull(o.max_pids.c_str(), &end, 10);
            if (o.max_pids.empty() || *end || o.max_pids[0] == '-' || n < 8 || n > 4194304)
                return base::error("bad --max-pids '" + o.max_pids + "'; use a number from 8 to 4194304");
            o.limits.max_pids = n;
        } else if (is("--max-size")) {
            TRY_VOID(value("--max-size", &o.max_size));
            if (!limits::parse_bytes(o.max_size, &o.limits.max_size) ||
                (o.limits.max_size && o.limits.max_size < (1 << 20)))
                return base::error("bad --max-size '" + o.max_size + "'; use e.g. 500M or 2G (at least 1M), or none");
        } else if (is("--max-memory")) {
            TRY_VOID(value("--max-memory", &o.max_memory));
            if (!limits::parse_bytes(o.max_memory, &o.limits.max_memory) ||
                (o.limits.max_memory && o.limits.max_memory < (16 << 20)))
                return base::error("bad --max-memory '" + o.max_memory +
                                   "'; use e.g. 512M or 4G (at least 16M), or none");
        } else if (is("--min-free")) {
            TRY_VOID(value("--min-free", &o.min_free));
            if (!disk_floor::parse(o.min_free, &o.min_free_spec))
                return base::error("bad --min-free '" + o.min_free +
                                   "'; use e.g. 1G or 2% (at least 1M, at most 50%), or none");
        } else if (is("--home")) {
            std::string v;
            TRY_VOID(value("--home", &v));
            if (v != "scratch" && v != "ro") return base::error("unknown --home '" + v + "'; use scratch or ro");
            o.home_scratch = v == "scratch";
        } else if (a == "--wait") {
            o.wait = true;
        } else if (a == "--env-clear") {
            o.env_clear = true;
        } else if (is("--env-keep")) {
            std::string v;
            TRY_VOID(value("--env-keep", &v));
            if (v.empty()) return base::error("--env-keep needs a variable name or glob, e.g. --env-keep GITHUB_TOKEN");
            o.env_keep.push_back(v);
        } else if (is("--env")) {
            std::string v;
            TRY_VOID(value("--env", &v));
            size_t eq = v.find('=');
            if (eq == std::string::npos || !profile::valid_env_name(v.substr(0, eq)))
                return base::error("bad --env '" + base::display_path(v) + "'; use --env NAME=VALUE");
            o.env_set.push_back(v);
        } else if (is("--tmp-size")) {
            TRY_VOID(value("--tmp-size", &o.tmp_size));
        } else if (is("--ipc-fd")) {
            std::string v;
            TRY_VOID(value("--ipc-fd", &v));
            char* end = nullptr;
            long n = std::strtol(v.c_str(), &end, 10);
            if (v.empty() || *end || n < 3 || n > 1 << 20)
                return base::error("--ipc-fd needs an open fd number >= 3, got '" + v + "'");
            o.ipc_fd = static_cast<int>(n);
        } else {
            return base::error("unknown option '" + base::display_path(a) + "'" + base::did_you_mean(a, kRunUsage));
        }
    }
    for (; i < args.size(); i++) o.command.push_back(args[i]);
    // execvp("") said "layover: : command not found inside the sandbox".
    if (!o.command.empty() && o.command[0].empty())
        return base::error(
            "the command to run is an empty word (''); name a program after '--', e.g. 'layover run -- make "
            "test', or give no command for a shell (an unset variable, as in -- \"$CMD\", gives '')");
    return o;
}
