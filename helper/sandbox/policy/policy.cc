#include "helper/sandbox/policy/policy.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include <cstdlib>

#include "helper/base/fd.h"
#include "helper/base/passwd.h"
#include "helper/base/text.h"
#include "helper/sandbox/policy/first_run.h"
#include "helper/sandbox/policy/profile.h"
#include "helper/sandbox/policy/scratch.h"
#include "helper/store/records/undo_trees.h"
#include "overlay/mountinfo.h"
#include "overlay/options.h"

namespace {

std::optional<std::vector<overlay::MountEntry>> host_mounts() {
    auto info = base::open_at(AT_FDCWD, "/proc/self/mountinfo", O_RDONLY);
    if (!info) return std::nullopt;
    auto text = base::read_all(info->get(), 64 << 20);
    if (!text) return std::nullopt;
    return overlay::parse_mountinfo(text.value());
}

// The caller's home in /etc/passwd ("" when it has none: profile.h says why
// not NSS). Tests, whose throwaway uid has no entry, name one with
// LAYOVER_TEST_ACCOUNT_HOME; it only adds paths to hide.
std::string account_home() {
    if (const char* t = std::getenv("LAYOVER_TEST_ACCOUNT_HOME")) return t;
    return base::passwd_file_home(::getuid());
}

std::string plural(size_t n, const std::string& word) { return std::to_string(n) + " " + word + (n == 1 ? "" : "s"); }

// A --ro/--rw path: it must exist and stay clear of what the sandbox owns.
base::Result<std::string> shown_path(const std::string& flag, const std::string& given, const std::string& cwd,
                                     const std::string& target, const std::string& state, const HidePlan& hide) {
    std::string abs = given[0] == '/' ? given : cwd + "/" + given;
    char buf[PATH_MAX];
    if (!::realpath(abs.c_str(), buf))
        return base::error(flag + " " + base::display_path(given) + " does not exist; pass an existing path");
    std::string p = buf;
    auto overlaps = [&](const std::string& other) {
        return overlay::path_within(p, other) || overlay::path_within(other, p);
    };
    if (p == "/") return base::error(flag + " / is not supported; name the path you need");
    for (const char* d : {"/proc", "/sys", "/dev"})
        if (overlay::path_within(p, d) && p.rfind("/dev/shm", 0) != 0)
            return base::error(flag + " " + p + " lies in " + d + ", which the sandbox builds itself; not supported");
    if (overlaps(state)) return base::error(flag + " " + p + " overlaps the session state; pick another path");
    if (flag == "--rw" && overlaps(target))
        return base::error("--rw " + p + " overlaps the target; the target is already writable inside");
    for (const auto& h : hide.mounts)
        if (overlay::path_within(p, h) || (flag == "--rw" && overlay::path_within(h, p)))
            return base::error(flag + " " + p + " would show the hidden " + base::display_path(h) +
                               "; pick another path, or --no-hide-secrets");
    return p;
}

}  // namespace

base::Result<RunPolicy> decide_policy(const RunOptions& opts, const std::string& target, const std::string& state,
                                      const std::vector<std::string>& command) {
    RunPolicy pol;
    char buf[PATH_MAX];
    std::string cwd = ::getcwd(buf, sizeof buf) ? buf : "";

    struct sysinfo si;
    unsigned long long ram =
        ::sysinfo(&si) == 0 ? static_cast<unsigned long long>(si.totalram) * si.mem_unit : 4ull << 30;
    pol.tmp_size = overlay::default_tmp_size(ram);
    if (!opts.tmp_size.empty() && !overlay::parse_size(opts.tmp_size, ram, &pol.tmp_size))
        return base::error("bad --tmp-size '" + opts.tmp_size + "'; use e.g. 512M, 2G or 10%");

    const char* home = std::getenv("HOME");
    HideRequest req{home ? home : "", target, cwd, opts.hide_secrets, opts.hide, session::tree_stores(state),
                    account_home()};
    auto mounts = host_mounts();
    TRY(pol.hide, plan_hide(req, mounts ? *mounts : std::vector<overlay::MountEntry>{}));
    if (mounts) pol.submounts = overlay::submounts_under(*mounts, target);
    for (const auto& n : pol.hide.notes) pol.notices.push_back(n);
    if (!pol.hide.shown.empty())
        pol.notices.push_back("hiding " + plural(pol.hide.shown.size(), "secret path") + " (" +
                              profile::list_names(pol.hide.shown, 4) + ")" +
                              (opts.hide_secrets ? "; --no-hide-secrets to show them" : ""));
    if (!pol.hide.user_shown.empty())
        pol.notices.push_back("hiding " + plural(pol.hide.user_shown.size(), "path") + " named by --hide (" +
                              profile::list_names(pol.hide.user_shown, 4) + ")");

    for (const auto& g : opts.ro) {
        TRY(std::string p, shown_path("--ro", g, cwd, target, state, pol.hide));
        pol.ro.push_back(p);
    }
    for (const auto& g : opts.rw) {
        TRY(std::string p, shown_path("--rw", g, cwd, target, state, pol.hide));
        pol.rw.push_back(p);
        pol.notices.push_back("--rw " + base::display_path(p) + ": writes there are real and never captured");
    }

    first_run::Visibility vis{target, pol.hide.mounts, pol.ro};
    vis.shown.insert(vis.shown.end(), pol.rw.begin(), pol.rw.end());
    TRY(first_run::Start start, first_run::start_dir(cwd, opts.cwd, vis));
    pol.start = start.dir;
    if (!start.notice.empty()) pol.notices.push_back(start.notice);
    std::string unseen = first_run::check_command_paths(command, pol.start, vis);
    if (!unseen.empty()) return base::error(unseen);

    struct stat st;
    std::vector<std::string> host_env;
    for (char** e = environ; e && *e; e++) host_env.emplace_back(*e);
    profile::EnvOutcome env = profile::filter_env(host_env, {opts.env_clear, opts.env_keep, opts.env_set});
    if (!env.dropped.empty())
        pol.notices.push_back("not passing " + plural(env.dropped.size(), "secret variable") + " (" +
                              profile::list_names(env.dropped, 6) + "); --env-keep NAME to pass one");
    pol.env = std::move(env.env);

    {
        std::vector<std::string> cands;
        for (const char* var : {"HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"}) {
            const char* v = std::getenv(var);
            char rb[PATH_MAX];
            if (v && *v == '/' && ::realpath(v, rb) && ::stat(rb, &st) == 0 && S_ISDIR(st.st_mode)) cands.push_back(rb);
        }
        std::vector<std::string> why;
        auto roots = scratch::choose_roots(cands, target, state, &why);
        if (opts.home_scratch) {
            pol.scratch = std::move(roots);
            for (const auto& w : why) pol.notices.push_back(w);
        } else {
            pol.read_only = std::move(roots);  // (nothing to say: they stay read-only)
        }
    }

    // A target inside a git work tree: let git find the repository across the
    // overlay's mount point (read-only: commits will fail), and say so.
    std::string git = first_run::git_dir_above(target);
    if (!git.empty() && ::stat((target + "/.git").c_str(), &st) != 0) {
        pol.env.push_back("GIT_DISCOVERY_ACROSS_FILESYSTEM=1");
        std::string repo = git.substr(0, git.size() - 5);
        pol.notices.push_back(base::display_path(git) + " is outside the target: git commits will fail; use --target " +
                              base::display_path(repo.empty() ? "/" : repo));
    }
    return pol;
}
