#include "review/apply/target.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "helper/base/passwd.h"
#include "helper/base/text.h"

namespace review {

namespace {

bool under(const std::string& path, const std::string& dir) {
    return path == dir ||
           (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 && path[dir.size()] == '/');
}

std::string real(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

// $HOME, else the account's home in /etc/passwd (not NSS: helper/base/passwd.h);
// canonical, or "" when unknown (a patch from elsewhere then needs --target).
std::string caller_home() {
    const char* h = std::getenv("HOME");
    std::string home = h && *h == '/' ? h : "";
    if (home.empty()) home = base::passwd_file_home(::getuid());
    return home.empty() ? "" : real(home);
}

}  // namespace

std::string target_path_problem(const std::string& path) {
    if (path.empty() || path[0] != '/') return "is not an absolute path";
    if (path == "/") return "is the root directory";
    if (path.back() == '/') return "is not canonical (a trailing '/')";
    for (size_t i = 1; i <= path.size();) {
        size_t end = path.find('/', i);
        if (end == std::string::npos) end = path.size();
        std::string_view c(path.data() + i, end - i);
        if (c.empty() || c == "." || c == "..") return "is not canonical (an empty, '.' or '..' component)";
        i = end + 1;
    }
    for (const char* sys : {"/proc", "/sys", "/dev"})
        if (under(path, sys)) return std::string("lies under ") + sys;
    return "";
}

bool within_home(const std::string& path, const std::string& home) {
    return !home.empty() && home != "/" && under(path, home);
}

std::string state_dir_problem(const std::string& target, const std::string& state,
                              const std::vector<std::string>& paths) {
    if (state.empty()) return "";
    const std::string what = "layover's state dir " + base::display_path(state) + " (sessions, journals, undo records)";
    if (under(target, state))
        return "target " + base::display_path(target) + " lies in " + what + "; nothing was applied; pass --target DIR";
    if (!under(state, target)) return "";  // (a target is never "/")
    std::string rel = state.substr(target.size() + 1);
    for (const auto& p : paths)
        if (under(p, rel) || under(rel, p))
            return base::display_path(p) + " would change " + what + "; leave it out with --exclude " +
                   base::display_path(p) + "; nothing was applied";
    return "";
}

base::Result<Target> open_target(const std::string& given, const capture::Patch& patch) {
    const std::string& want = given.empty() ? patch.manifest().target : given;
    std::string shown = base::display_path(want);
    auto refuse = [&](const std::string& why) {
        return base::error("target " + shown + " " + why + "; nothing was applied; pass --target DIR");
    };
    if (std::string why = target_path_problem(want); !why.empty()) return refuse(why);
    struct stat st {};
    if (::lstat(want.c_str(), &st) != 0) {
        // Said as run says it ("cannot open the target; pass --target DIR: target X: No such file...").
        if (errno == ENOENT) return refuse("does not exist");
        // Said as one line in that order too: it read "cannot open the target;
        // pass --target DIR: target X: Permission denied" (another user's tree).
        return refuse(std::string("cannot be reached (") + std::strerror(errno) + ")");
    }
    if (S_ISLNK(st.st_mode)) {
        std::string to = real(want);
        return refuse("is a symlink" + (to.empty() ? std::string() : " (to " + base::display_path(to) + ")") +
                      "; a target must be the directory itself");
    }
    if (!S_ISDIR(st.st_mode)) return refuse("is not a directory");
    Target t;
    t.path = real(want);
    if (t.path.empty()) return base::sys_error("target " + shown).context("cannot resolve the target");
    if (std::string why = target_path_problem(t.path); !why.empty())
        return refuse("resolves to " + base::display_path(t.path) + ", which " + why);
    if (given.empty() && !patch.from_session() && !within_home(t.path, caller_home()))
        return base::error("the patch file names its target " + shown +
                           ", which is not your home directory or beneath it; a patch from elsewhere "
                           "does not choose where it writes: check it with 'layover show', then pass --target DIR");
    TRY(t.fd, base::open_at(AT_FDCWD, t.path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    if (::fstat(t.fd.get(), &st) != 0) return base::sys_error("stat target");
    t.dev = st.st_dev;
    t.ino = st.st_ino;
    return t;
}

}  // namespace review
