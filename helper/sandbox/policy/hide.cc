#include "helper/sandbox/policy/hide.h"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include "helper/base/text.h"
#include "helper/sandbox/policy/profile.h"

namespace {

std::string relative_to(const std::string& path, const std::string& dir) {
    return path.size() == dir.size() ? "" : path.substr(dir.size() + 1);
}

bool same_file(const std::string& a, const struct stat& b) {
    struct stat st;
    return ::stat(a.c_str(), &st) == 0 && st.st_dev == b.st_dev && st.st_ino == b.st_ino;
}

void add_unique(std::vector<std::string>* v, const std::string& s) {
    if (std::find(v->begin(), v->end(), s) == v->end()) v->push_back(s);
}

// Where a missing path would be once made on the host: the dirs that exist
// above it resolved (a symlinked ~/.config leads elsewhere), and a symlink
// whose target is missing followed too (~/.aws -> vault/aws before the vault
// is made: the secret appears where it leads), walked down from the home's
// real path or from "/"; "" when a non-dir stands in the way, or nothing is
// missing. One lstat per existing component below the base.
std::string resolve_missing(const std::string& path, const std::string& home, const std::string& home_real) {
    bool in_home = !home.empty() && !home_real.empty() && home != "/" && overlay::path_within(path, home);
    std::string cur = in_home && home_real != "/" ? home_real : "";  // resolved, no symlink in it
    std::string rest = in_home ? path.substr(std::min(path.size(), home.size() + 1)) : path;
    int links = 0;
    while (!rest.empty()) {
        size_t j = rest.find('/');
        std::string name = rest.substr(0, j);
        rest = j == std::string::npos ? "" : rest.substr(j + 1);
        if (name.empty() || name == ".") continue;
        if (name == "..") {  // cur has no symlink: its parent is lexical
            cur = cur.substr(0, cur.rfind('/') == std::string::npos ? 0 : cur.rfind('/'));
            continue;
        }
        std::string next = cur + "/" + name;
        struct stat st;
        if (::lstat(next.c_str(), &st) != 0) return errno == ENOENT ? next + (rest.empty() ? "" : "/" + rest) : "";
        if (S_ISLNK(st.st_mode)) {
            char buf[PATH_MAX];
            ssize_t n = ::readlink(next.c_str(), buf, sizeof buf);
            if (n <= 0 || n >= static_cast<ssize_t>(sizeof buf) || ++links > 40) return "";
            std::string to(buf, static_cast<size_t>(n));
            if (to[0] == '/') cur.clear();
            rest = rest.empty() ? to : to + "/" + rest;
            continue;
        }
        if (!S_ISDIR(st.st_mode)) return "";
        cur = next;
    }
    return "";
}

}  // namespace

base::Result<HidePlan> plan_hide(const HideRequest& req, const std::vector<overlay::MountEntry>& mounts) {
    HidePlan plan;
    std::string home = req.home.empty() ? "" : base::clean_path(req.home);
    char buf[PATH_MAX];
    std::string home_real = !home.empty() && ::realpath(home.c_str(), buf) ? buf : home;

    struct Want {
        std::string path, shown;
        bool user = false;   // named by --hide, not the secrets preset
        bool store = false;  // an undo store: covered where it exists, nothing said
    };
    std::vector<Want> wants;
    // The undo stores an apply keeps in a tree (TARGET/.layover-undo when the
    // state dir is on another filesystem) hold the originals it replaced or
    // deleted, hidden ones and secrets too: those of the target, of every
    // dir above it and of the home (whose tree the home's layer shows).
    for (std::string d = req.target; !d.empty();) {
        wants.push_back({(d == "/" ? "" : d) + "/.layover-undo", "", false, true});
        if (d == "/") break;
        auto slash = d.rfind('/');
        d = slash == 0 ? "/" : d.substr(0, slash);
    }
    if (!home.empty() && !overlay::path_within(req.target, home))
        wants.push_back({(home == "/" ? "" : home) + "/.layover-undo", "", false, true});
    // And every other one apply kept in a tree (helper/store/records/undo_trees.h):
    // below the target (a tree applied to on its own, then a sandbox over a
    // dir above it), and anywhere else, which the home's layer or the
    // read-only view of the rest shows (a sandbox over a sibling project).
    for (const auto& st : req.stores) wants.push_back({st, "", false, true});
    if (req.secrets && !home.empty())
        for (const auto& rel : profile::secret_paths()) wants.push_back({home + "/" + rel, "~/" + rel});
    // A caller whose $HOME is not its account's home (an agent harness's
    // scratch HOME, a service, `env HOME=...`) still has its keys in the
    // account's home, which the read-only view shows: hidden too (attack17).
    std::string account = req.account_home.empty() ? "" : base::clean_path(req.account_home);
    if (req.secrets && !account.empty() && account != "/" && account != home && account != home_real)
        for (const auto& rel : profile::secret_paths())
            wants.push_back({account + "/" + rel, base::display_path(account + "/" + rel)});
    if (req.secrets)
        for (const auto& p : profile::daemon_sockets()) wants.push_back({p, p});
    for (const auto& u : req.user) {
        if (u.empty()) return base::error("--hide needs a path");
        std::string abs = base::clean_path(u[0] == '/' ? u : req.cwd + "/" + u);
        bool in_home = !home.empty() && home != "/" && abs != home && overlay::path_within(abs, home);
        wants.push_back(
            {abs, in_home ? "~/" + base::display_path(relative_to(abs, home)) : base::display_path(abs), true});
    }

    for (const auto& w : wants) {
        // As named, and as resolved: both spellings are kept out of capture.
        // Most secrets are absent: one lstat says so, where realpath reads
        // each component's link first.
        struct stat lst;
        bool found = ::lstat(w.path.c_str(), &lst) == 0;
        bool absent = !found && (errno == ENOENT || errno == ENOTDIR);
        std::string real = !absent && ::realpath(w.path.c_str(), buf) ? buf : "";
        if (w.store && (!found || !S_ISDIR(lst.st_mode))) continue;  // none, or not layover's
        for (const std::string& p : {w.path, real,
                                     home_real.empty() || home.empty() || !overlay::path_within(w.path, home)
                                         ? std::string()
                                         : home_real + w.path.substr(home.size())})
            if (!w.store && !p.empty() && p != req.target && overlay::path_within(p, req.target))
                add_unique(&plan.in_target, relative_to(p, req.target));
        if (real.empty()) {
            // Absent: nothing to cover; kept missing inside as spelled and
            // as it would resolve (overlay/mask.h), never captured either way.
            // A dangling symlink: kept missing where it leads.
            if (w.store || (!absent && !(found && S_ISLNK(lst.st_mode)))) continue;
            if (absent) add_unique(&plan.missing, w.path);
            std::string there = resolve_missing(w.path, home, home_real);
            if (there.empty() || there == w.path) continue;
            add_unique(&plan.missing, there);
            if (there != req.target && overlay::path_within(there, req.target))
                add_unique(&plan.in_target, relative_to(there, req.target));
            continue;
        }
        if (overlay::path_within(req.target, real)) {
            if (w.store) continue;
            plan.notes.push_back("not hiding " + w.shown + ": the target lies inside it");
            continue;
        }
        struct stat st;
        if (::stat(real.c_str(), &st) != 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode))) {
            plan.notes.push_back("not hiding " + w.shown + ": only files, directories and sockets can be hidden");
            continue;
        }
        add_unique(&plan.mounts, real);
        for (const auto& a : overlay::aliases_of(mounts, real)) {
            if (!same_file(a, st)) continue;
            add_unique(&plan.mounts, a);
            if (!w.store && a != req.target && overlay::path_within(a, req.target))
                add_unique(&plan.in_target, relative_to(a, req.target));
        }
        if (!w.store) add_unique(w.user ? &plan.user_shown : &plan.shown, w.shown);
    }
    return plan;
}
