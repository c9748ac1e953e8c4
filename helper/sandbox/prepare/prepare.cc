#include "helper/sandbox/prepare/prepare.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "helper/base/clock.h"
#include "helper/base/text.h"
#include "helper/sandbox/limits/disk_floor.h"
#include "helper/sandbox/policy/policy.h"
#include "helper/sandbox/policy/scratch.h"
#include "helper/sandbox/prepare/spare.h"
#include "helper/sandbox/seccomp/seccomp.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/records/rename_temps.h"
#include "helper/store/records/root_mode.h"
#include "helper/store/session/first_copies.h"
#include "helper/store/session/remove.h"
#include "overlay/mountinfo.h"
#include "overlay/options.h"

namespace {

std::string rfc3339(int64_t ns) {
    time_t s = static_cast<time_t>(ns / 1000000000);
    struct tm tm;
    ::gmtime_r(&s, &tm);
    char buf[32];
    ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

int64_t now_ns(clockid_t clock = CLOCK_REALTIME) {
    struct timespec ts;
    ::clock_gettime(clock, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The start of a resumed run as file times read it: the coarse clock, past
// `last` (the last run's meta.json, written after every file it made). A
// ctime comes from the coarse clock (never below a fine time handed out
// before it), so the last run's files are all older than the result and
// this run's never are (scratch::summarize's "from earlier runs"). Only a
// run resumed within a tick of the last one's end (scripted back to back)
// waits, for the rest of that tick; a clock stepped back waits no more than 50 ms.
int64_t coarse_start_after(int64_t last) {
    int64_t now = now_ns(CLOCK_REALTIME_COARSE);
    for (int i = 0; i < 50 && now <= last; i++) {
        struct timespec one_ms = {0, 1000000};
        ::nanosleep(&one_ms, nullptr);
        now = now_ns(CLOCK_REALTIME_COARSE);
    }
    return now;
}

// Each session is a tree of its own: on ext4, mark STATE/sessions "top of a
// hierarchy" (FS_TOPDIR_FL, as for /home), so that the allocator spreads new
// session dirs over block groups instead of packing them next to the
// sessions that were just deleted. On this VM's ext4 (no journal) every new
// inode walks past each inode of its group freed in the last minute(s)
// (`recently_deleted`): a sandboxed `cp -a` of 6,000 files took 15-25 s in
// such a group and 1.7-1.9 s in a fresh one (docs/performance.md).
// Best effort: other file systems have no such flag.
void spread_sessions(const std::string& state) { mark_top_dir(session::sessions_dir(state)); }

// A target that came quoted, so no shell expanded it (`--target "~/proj"`,
// `--target '$HOME/proj'`, or a config file's value): the words that say so.
std::string unexpanded_hint(const std::string& given) {
    const char* home = std::getenv("HOME");
    struct stat st;
    if (given.rfind("~/", 0) == 0 && home && home[0] == '/' && ::stat((home + given.substr(1)).c_str(), &st) == 0 &&
        S_ISDIR(st.st_mode))
        return " (a quoted '~' is not expanded: did you mean " + std::string(home) + given.substr(1) + "?)";
    if (given[0] == '~' || given.find('$') != std::string::npos)
        return " (a quoted '~' or '$VAR' is not expanded: leave it unquoted, or give the absolute path)";
    return "";
}

}  // namespace

base::Result<std::string> resolve_target(const std::string& given) {
    char buf[PATH_MAX];
    if (!::realpath(given.c_str(), buf)) {
        if (errno == ENOENT)
            return base::error("target " + given + " does not exist; create it or pass another --target" +
                               unexpanded_hint(given));
        return base::sys_error("target " + given);
    }
    std::string t = buf;
    struct stat st;
    if (::stat(t.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        return base::error("target " + given + " is not a directory; pass a directory with --target");
    if (t == "/") return base::error("target / is not supported: overlay a directory such as your home");
    for (const char* d : {"/proc", "/sys", "/dev"})
        if (overlay::path_within(t, d))
            return base::error("target " + t + " lies in " + d + ", which the sandbox replaces; pick another --target");
    return t;
}

namespace {

// A scratch layer's dirs (helper/sandbox/policy/scratch.h); its work dir fresh.
base::Result<void> make_scratch_layer(const std::string& dir, const overlay::MountPlan::Scratch& s) {
    std::string layer = s.upper.substr(0, s.upper.rfind('/'));
    ::mkdir((dir + "/outside").c_str(), 0700);
    ::mkdir(layer.c_str(), 0700);
    if (::mkdir(s.upper.c_str(), 0755) != 0 && errno != EEXIST)
        return base::sys_error("creating a scratch layer in " + layer);
    TRY_VOID(remove_tree_fast(s.work));
    if (::mkdir(s.work.c_str(), 0700) != 0) return base::sys_error("creating " + s.work);
    return base::Ok();
}

// The label of the step this run makes: the command line, shortened.
std::string step_label(const std::string& label, const std::vector<std::string>& cmd) {
    std::string s = label;
    if (s.empty())
        for (size_t i = 0; i < cmd.size(); i++) s += (i ? " " : "") + cmd[i];
    if (s.size() > 200) {
        s.resize(197);
        s += "...";
    }
    return s;
}

// Freeze a resumed session's live upper as a step, as its owner (the
// program may have left mode-000 dirs), in a child: run keeps its identity.
base::Result<void> freeze_previous(const std::string& dir, const std::string& target, int max_steps) {
    auto r = capture::in_owner_ns([&]() -> base::Result<std::string> {
        // What a rename worker left half-copied when the last run's
        // supervisor was killed: gone before the upper is frozen.
        rename_temps::sweep_session(dir);
        TRY(std::string pending, steps::finish_pending(dir));  // a killed rollback first (docs/history.md)
        (void)pending;
        TRY(int n, steps::freeze_live(dir, target, rfc3339(now_ns()), max_steps));
        return std::to_string(n);
    });
    if (!r) return r.error().context("freezing the session's last run as a step");
    return base::Ok();
}

}  // namespace

base::Result<PreparedRun> prepare_run(const RunOptions& opts) {
    PreparedRun r;
    r.max_steps = opts.max_steps;
    std::string given = opts.target;
    if (given.empty()) {
        const char* home = std::getenv("HOME");
        if (!home || !*home) return base::error("HOME is not set; pass --target DIR");
        given = home;
    }
    TRY(std::string target, resolve_target(given));
    TRY(std::string state, session::state_dir());
    spread_sessions(state);
    char sbuf[PATH_MAX];
    std::string state_real = ::realpath(state.c_str(), sbuf) ? sbuf : state;
    if (overlay::path_within(state_real, target) || overlay::path_within(target, state_real))
        return base::error("the state dir " + state_real + " overlaps the target " + target +
                           "; set LAYOVER_STATE_DIR outside it");
    // The free-space floor (one statvfs): below it already, nothing starts.
    TRY(disk_floor::Floor floor, disk_floor::at_start(opts.min_free_spec, state_real));

    std::vector<std::string> cmd = opts.command;
    if (cmd.empty()) {
        const char* sh = std::getenv("SHELL");
        cmd.push_back(sh && *sh ? sh : "/bin/sh");
    }
    TRY(RunPolicy pol, decide_policy(opts, target, state_real, cmd));
    r.notices = pol.notices;

    // A name of our own, never an existing session's (resumed) or trash entry's.
    auto taken = [&](const std::string& n) {
        struct stat st;
        for (const std::string& d : {session::sessions_dir(state), session::trash_dir(state)})
            if (::lstat((d + "/" + n).c_str(), &st) == 0 || errno != ENOENT) return true;
        return false;
    };
    std::string name = opts.session.empty() ? session::new_name(taken) : opts.session;
    std::string dir = session::sessions_dir(state) + "/" + name;
    auto old = session::read_meta(dir);
    // There but unreadable (its mode, a corrupt meta.json): never a new
    // session over it, and never "remove it" (found by the attack pass of
    // 27 Nov: that advice, for a 000 session dir, would drop its changes).
    if (!old && old.error().code != ENOENT) {
        struct stat st;
        if (::lstat(dir.c_str(), &st) == 0)
            return base::error("session '" + name + "' cannot be resumed: " + old.error().message + " (chmod u+rwx " +
                               dir + " when it is its mode); or use another --session name");
    }
    int64_t last_end_ns = 0;  // a resumed session's last meta.json write (coarse_start_after)
    if (old) {
        if (old->target != target)
            return base::error("session '" + name + "' overlays " + old->target + ", not " + target +
                               "; resume it with --target " + old->target + ", or use another --session name");
        TRY(r.lock, session::lock(dir, name));
        r.meta = old.value();
        // Its last run noted nothing (a discarding run, killed or stopped): the
        // notes say so before meta.json's on_exit no longer does.
        if (session::unnoted_since(r.meta) >= 0) session::mark_unnoted(dir, session::unnoted_since(r.meta));
        struct stat ms;
        if (::stat((dir + "/meta.json").c_str(), &ms) == 0)
            last_end_ns = base::time_ns(ms.st_mtim.tv_sec, ms.st_mtim.tv_nsec);
        // Resuming: the last run's upper becomes a frozen step (docs/history.md).
        TRY_VOID(freeze_previous(dir, target, opts.max_steps));
        TRY_VOID(session::match_root_mode(session::upper_dir(dir), target));  // also a fork's or rollback's
    } else {
        // A new session: its dirs are made by supervise() once setup is
        // forked (make_session_dirs), while setup makes the namespaces.
        r.created = true;
        r.dirs_pending = true;
        r.meta.name = name;
        r.meta.target = target;
        r.meta.created_ns = now_ns();
        r.meta.created = rfc3339(r.meta.created_ns);
        // `--session NAME` of a discarded session reads as a resume, which it is not: say so.
        struct stat st;
        if (!opts.session.empty() && ::stat((session::trash_dir(state) + "/" + name).c_str(), &st) == 0)
            r.notices.push_back("session '" + name +
                                "' is in the trash (discarded): this run starts a new one of that name; to resume "
                                "the discarded one, exit without changes, then 'layover restore " +
                                name + "' and run again");
    }
    // volatile leaves work/incompat/volatile behind, which makes the next
    // mount of the same workdir fail: every mount gets a fresh one.
    std::string work = session::work_dir(dir);
    if (!r.created) {
        TRY_VOID(remove_tree_fast(work));
        if (::mkdir(work.c_str(), 0700) != 0) return base::sys_error("creating the overlay work dir");
    }

    r.meta.command = cmd;
    r.meta.pid = ::getpid();
    r.meta.status = "running";
    r.meta.exit_code = -1;
    r.meta.network = opts.network;
    r.meta.limits = {opts.limits.timeout_ms, opts.limits.max_pids, opts.limits.max_size,
                     opts.limits.max_memory, floor.bytes,          floor.inodes};
    r.meta.stopped.clear();
    // A new run: what an earlier one's changes led to no longer describes the session.
    r.meta.changes = -1;
    r.meta.applied.clear();
    r.meta.undo.clear();
    r.meta.saved.clear();
    r.meta.label = opts.label;

    // A resumed session keeps what it hid before: what the agent wrote there
    // while it was hidden is never captured.
    for (const auto& h : pol.hide.in_target)
        if (std::find(r.meta.hidden.begin(), r.meta.hidden.end(), h) == r.meta.hidden.end()) r.meta.hidden.push_back(h);
    // Scratch layers: a resumed session keeps each root's index (its dir).
    std::vector<overlay::MountPlan::Scratch> scratch;
    for (const auto& root : pol.scratch) {
        auto it = std::find(r.meta.outside.begin(), r.meta.outside.end(), root);
        size_t i = static_cast<size_t>(it - r.meta.outside.begin());
        if (it == r.meta.outside.end()) r.meta.outside.push_back(root);
        std::string layer = scratch::layer_dir(dir, i);
        scratch.push_back({root, layer + "/upper", layer + "/work"});
        if (!r.created) TRY_VOID(make_scratch_layer(dir, scratch.back()));
    }
    // meta.json and steps/live.json are written by supervise() once setup is
    // forked (write_start_records): their inode creations overlap the
    // namespace set-up on the other core. A new session has no steps yet.
    r.started_coarse_ns = coarse_start_after(last_end_ns);  // first: never after a ctime of the run's
    r.started_ns = now_ns();
    r.live = {step_label(opts.label, cmd), rfc3339(r.started_ns), ""};
    int nsteps = 0;
    if (!r.created) {
        TRY(nsteps, steps::count(dir));
    }

    SandboxPlan& p = r.plan;
    p.mounts = {target,
                session::upper_dir(dir),
                work,
                state_real,
                opts.network == "host",
                pol.tmp_size,
                pol.hide.mounts,
                pol.ro,
                pol.rw,
                scratch,
                {},
                pol.submounts,
                pol.hide.missing,
                pol.read_only};
    int first = 1;  // below it: squashed steps, no layers
    if (nsteps > 0) {
        TRY(first, steps::first_layer(dir));
    }
    for (int i = nsteps; i >= first; i--) {
        TRY(std::string layer, steps::layer_path(dir, i));
        p.mounts.steps.push_back(std::move(layer));
    }
    p.cwd = pol.start;
    p.env = std::move(pol.env);
    p.loopback = opts.network == "loopback";
    p.wait_all = opts.wait;
    p.limits = opts.limits;
    p.limits.min_free = floor;
    r.memory = memcg::Scope::for_limit(opts.limits.max_memory, &r.notices);  // empty: RLIMIT_AS
    p.limits.memory_cgroup = r.memory.sandbox_dir();
    // Test-only: the mount-locking tests prove the mounts are locked, not
    // merely that seccomp refused the call (docs/cli.md).
    const char* no_filter = std::getenv("LAYOVER_TEST_NO_SECCOMP");
    p.seccomp = !(no_filter && std::string(no_filter) == "1");
    p.rename_notify = p.seccomp && seccomp::notify_supported();
    p.command = cmd;
    p.session = name;
    p.ipc_fd = opts.ipc_fd;
    p.uid = ::geteuid();
    p.gid = ::getegid();
    r.session_dir = dir;
    return r;
}

base::Result<void> make_session_dirs(PreparedRun& r) {
    if (!r.dirs_pending) return base::Ok();
    const std::string& dir = r.session_dir;
    // The dir with its upper, work and steps (and a first scratch layer's)
    // made ahead by a discard's remover (helper/sandbox/prepare/spare.h), else made here.
    std::string sessions = dir.substr(0, dir.rfind('/'));
    bool spare = take_spare(sessions.substr(0, sessions.rfind('/')), dir);
    if (!spare && ::mkdir(dir.c_str(), 0700) != 0) {
        if (errno == EEXIST)
            return base::error("session dir " + dir +
                               " exists without metadata; remove it or use another --session name");
        return base::sys_error("creating session dir " + dir);
    }
    r.dirs_pending = false;  // ours now: a failed run removes it
    TRY(r.lock, session::lock(dir, r.meta.name));
    if (!spare && ::mkdir(r.plan.mounts.upper.c_str(), 0755) != 0) return base::sys_error("creating the upper layer");
    TRY_VOID(session::match_root_mode(r.plan.mounts.upper, r.plan.mounts.target));
    if (!spare && ::mkdir(r.plan.mounts.work.c_str(), 0700) != 0)
        return base::sys_error("creating the overlay work dir");
    // A spare's first scratch layer is fresh (empty upper and work): used
    // as it is; one this run does not use goes.
    struct stat st;
    bool spare_layer = spare && ::lstat(scratch::layer_dir(dir, 0).c_str(), &st) == 0;
    if (spare_layer && r.plan.mounts.scratch.empty()) TRY_VOID(remove_tree_fast(dir + "/outside"));
    for (size_t i = spare_layer ? 1 : 0; i < r.plan.mounts.scratch.size(); i++)
        TRY_VOID(make_scratch_layer(dir, r.plan.mounts.scratch[i]));
    return base::Ok();
}

base::Result<void> write_start_records(const PreparedRun& run) {
    TRY_VOID(session::write_meta(run.session_dir, run.meta));
    return steps::write_live(run.session_dir, run.live);
}
