#include "helper/sandbox/policy/first_run.h"

#include <limits.h>
#include <sys/stat.h>

#include <cstdlib>

#include "helper/base/text.h"
#include "overlay/mountinfo.h"

namespace first_run {

namespace {

const char* const kReplaced[] = {"/tmp", "/var/tmp", "/run", "/dev", "/proc", "/sys"};

std::string absolute(const std::string& p, const std::string& cwd) {
    if (!p.empty() && p[0] == '/') return p;
    return cwd == "/" ? "/" + p : cwd + "/" + p;
}

bool exists(const std::string& p) {
    struct stat st;
    return ::stat(p.c_str(), &st) == 0;
}

std::string real(const std::string& p) {
    char buf[PATH_MAX];
    return ::realpath(p.c_str(), buf) ? std::string(buf) : p;
}

}  // namespace

bool replaced_inside(const std::string& abs_path) {
    for (const char* d : kReplaced)
        if (overlay::path_within(abs_path, d)) return true;
    return false;
}

std::string unseen_reason(const std::string& abs, const Visibility& v) {
    if (overlay::path_within(abs, v.target)) return "";
    for (const auto& s : v.shown)
        if (overlay::path_within(abs, s)) return "";
    for (const auto& h : v.hidden)
        if (overlay::path_within(abs, h)) return "it lies in the hidden " + base::display_path(h);
    for (const char* d : kReplaced)
        if (overlay::path_within(abs, d)) return std::string("the sandbox has its own ") + d;
    return "";
}

base::Result<Start> start_dir(const std::string& caller_cwd, const std::string& given, const Visibility& v) {
    if (!given.empty()) {
        std::string abs = real(absolute(given, caller_cwd));
        struct stat st;
        if (::stat(abs.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return base::error("--cwd " + base::display_path(given) +
                               " is not a directory; pass one inside the target");
        std::string why = unseen_reason(abs, v);
        if (!why.empty())
            return base::error("--cwd " + base::display_path(abs) + " is not visible inside (" + why +
                               "); pass a directory inside the target, or add --ro " + base::display_path(abs));
        return Start{abs, ""};
    }
    if (!caller_cwd.empty() && overlay::path_within(caller_cwd, v.target)) return Start{caller_cwd, ""};
    return Start{v.target, "starting in " + base::display_path(v.target) +
                               ": the current directory is outside the target (--cwd DIR to choose)"};
}

std::string check_command_paths(const std::vector<std::string>& command, const std::string& cwd, const Visibility& v) {
    for (size_t i = 0; i < command.size(); i++) {
        const std::string& a = command[i];
        // The command when it names a path; an argument only when it is an
        // existing file below a replaced dir (a bare "/tmp" is fine inside).
        bool named = i == 0 ? a.find('/') != std::string::npos : !a.empty() && a[0] != '-';
        if (!named) continue;
        std::string abs = absolute(a, cwd);
        struct stat st;
        if (::stat(abs.c_str(), &st) != 0) continue;
        abs = real(abs);
        // `layover run ~/project`, --target left out: the tree, not a command
        // (it failed inside with "cannot execute: Permission denied").
        if (i == 0 && S_ISDIR(st.st_mode))
            return base::display_path(a) + " is a directory, not a command: to run over it, pass --target " +
                   base::display_path(abs) + " (layover run --target DIR [-- CMD])";
        if (i > 0) {
            bool below = false;
            for (const char* d : kReplaced)
                if (abs != d && overlay::path_within(abs, d)) below = true;
            if (!below && unseen_reason(abs, v).find("hidden") == std::string::npos) continue;
        }
        std::string why = unseen_reason(abs, v);
        if (why.empty()) continue;
        return base::display_path(abs) + " is not visible inside the sandbox (" + why + "); add --ro " +
               base::display_path(abs) + " to show it read-only, or move it into the target";
    }
    return "";
}

std::string git_dir_above(const std::string& target) {
    std::string dir = target;
    while (dir != "/" && !dir.empty()) {
        size_t slash = dir.rfind('/');
        dir = slash == 0 ? "/" : dir.substr(0, slash);
        std::string git = dir == "/" ? "/.git" : dir + "/.git";
        if (exists(git)) return git;
    }
    return "";
}

}  // namespace first_run
