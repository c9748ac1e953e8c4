#include "helper/sandbox/prepare.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "helper/base/text.h"
#include "helper/sandbox/hide.h"
#include "helper/sandbox/profile.h"
#include "helper/store/remove.h"
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

int64_t now_ns() {
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// The caller's environment, filtered (profile::filter_env).
profile::EnvOutcome child_env(const RunOptions& opts) {
    std::vector<std::string> host;
    for (char** e = environ; e && *e; e++) host.emplace_back(*e);
    return profile::filter_env(host, {opts.env_clear, opts.env_keep, opts.env_set});
}

base::Result<HidePlan> hidden_paths(const RunOptions& opts, const std::string& target, const std::string& cwd) {
    std::vector<overlay::MountEntry> mounts;
    auto info = base::open_at(AT_FDCWD, "/proc/self/mountinfo", O_RDONLY);
    if (info) {
        auto text = base::read_all(info->get(), 64 << 20);
        if (text) mounts = overlay::parse_mountinfo(text.value());
    }
    const char* home = std::getenv("HOME");
    HideRequest req{home ? home : "", target, cwd, opts.hide_secrets, opts.hide};
    return plan_hide(req, mounts);
}

}  // namespace

base::Result<std::string> resolve_target(const std::string& given) {
    char buf[PATH_MAX];
    if (!::realpath(given.c_str(), buf)) {
        if (errno == ENOENT)
            return base::error("target " + given + " does not exist; create it or pass another --target");
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

base::Result<PreparedRun> prepare_run(const RunOptions& opts) {
    PreparedRun r;
    std::string given = opts.target;
    if (given.empty()) {
        const char* home = std::getenv("HOME");
        if (!home || !*home) return base::error("HOME is not set; pass --target DIR");
        given = home;
    }
    TRY(std::string target, resolve_target(given));
    TRY(std::string state, session::state_dir());
    char sbuf[PATH_MAX];
    std::string state_real = ::realpath(state.c_str(), sbuf) ? sbuf : state;
    if (overlay::path_within(state_real, target) || overlay::path_within(target, state_real))
        return base::error("the state dir " + state_real + " overlaps the target " + target +
                           "; set LAYOVER_STATE_DIR outside it");

    std::string name = opts.session.empty() ? session::new_name() : opts.session;
    std::string dir = session::sessions_dir(state) + "/" + name;
    auto old = session::read_meta(dir);
    if (old) {
        if (old->target != target)
            return base::error("session '" + name + "' overlays " + old->target + ", not " + target +
                               "; use another --session name");
        TRY(r.lock, session::lock(dir, name));
        r.meta = old.value();
    } else {
        if (::mkdir(dir.c_str(), 0700) != 0) {
            if (errno == EEXIST)
                return base::error("session dir " + dir +
                                   " exists without metadata; remove it or use another --session name");
            return base::sys_error("creating session dir " + dir);
        }
        r.created = true;
        TRY(r.lock, session::lock(dir, name));
        if (::mkdir(session::upper_dir(dir).c_str(), 0755) != 0) return base::sys_error("creating the upper layer");
        r.meta.name = name;
        r.meta.target = target;
        r.meta.created_ns = now_ns();
        r.meta.created = rfc3339(r.meta.created_ns);
    }
    // volatile leaves work/incompat/volatile behind, which makes the next
    // mount of the same workdir fail: every mount gets a fresh one.
    std::string work = session::work_dir(dir);
    TRY_VOID(remove_tree_fast(work));
    if (::mkdir(work.c_str(), 0700) != 0) return base::sys_error("creating the overlay work dir");

    std::vector<std::string> cmd = opts.command;
    if (cmd.empty()) {
        const char* sh = std::getenv("SHELL");
        cmd.push_back(sh && *sh ? sh : "/bin/sh");
    }
    r.meta.command = cmd;
    r.meta.pid = ::getpid();
    r.meta.status = "running";
    r.meta.exit_code = -1;
    r.meta.network = opts.network;

    char cwd[PATH_MAX];
    std::string here = ::getcwd(cwd, sizeof cwd) ? cwd : "";
    TRY(HidePlan hide, hidden_paths(opts, target, here));
    // A resumed session keeps what it hid before: what the agent wrote there
    // while it was hidden is never captured.
    for (const auto& h : hide.in_target)
        if (std::find(r.meta.hidden.begin(), r.meta.hidden.end(), h) == r.meta.hidden.end()) r.meta.hidden.push_back(h);
    TRY_VOID(session::write_meta(dir, r.meta));
    for (const auto& n : hide.notes) r.notices.push_back(n);
    if (!hide.shown.empty())
        r.notices.push_back("hiding " + std::to_string(hide.shown.size()) + " secret path" +
                            (hide.shown.size() == 1 ? "" : "s") + " (" + profile::list_names(hide.shown, 4) + ")" +
                            (opts.hide_secrets ? "; --no-hide-secrets to show them" : ""));
    profile::EnvOutcome env = child_env(opts);
    if (!env.dropped.empty())
        r.notices.push_back("not passing " + std::to_string(env.dropped.size()) + " secret variable" +
                            (env.dropped.size() == 1 ? "" : "s") + " (" + profile::list_names(env.dropped, 6) +
                            "); --env-keep NAME to pass one");

    struct sysinfo si;
    unsigned long long ram =
        ::sysinfo(&si) == 0 ? static_cast<unsigned long long>(si.totalram) * si.mem_unit : 4ull << 30;
    unsigned long long tmp = overlay::default_tmp_size(ram);
    if (!opts.tmp_size.empty() && !overlay::parse_size(opts.tmp_size, ram, &tmp))
        return base::error("bad --tmp-size '" + opts.tmp_size + "'; use e.g. 512M, 2G or 10%");

    SandboxPlan& p = r.plan;
    p.mounts = {target, session::upper_dir(dir), work, state_real, opts.network == "host", tmp, hide.mounts};
    p.cwd = here;
    p.env = std::move(env.env);
    p.loopback = opts.network == "loopback";
    p.command = cmd;
    p.session = name;
    p.ipc_fd = opts.ipc_fd;
    p.uid = ::geteuid();
    p.gid = ::getegid();
    r.session_dir = dir;
    return r;
}
