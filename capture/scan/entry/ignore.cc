#include "capture/scan/entry/ignore.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "helper/base/fd.h"
#include "helper/base/text.h"

namespace capture {

const char kIgnoreFlagsHelp[] =
    "  --ignore GLOB         leave out paths matching GLOB too (gitignore syntax; repeatable)\n"
    "  --no-default-ignores  do not leave out the built-in caches (__pycache__/, ~/.cache/, ...)\n"
    "  --include-ignored     show and carry ignored paths as well\n";

namespace {

std::string trimmed(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    return p;
}

// A literal path as a glob: its metacharacters escaped.
std::string escaped(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '*' || c == '?' || c == '[' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

constexpr size_t kMaxIgnoreFile = 1 << 20;

}  // namespace

std::vector<std::string> default_ignore_lines(const std::string& target, const std::string& home) {
    std::vector<std::string> out = {"__pycache__/", "*.pyc", ".pytest_cache/", ".mypy_cache/", "*.swp", "*.swo",
                                    "*~",           ".#*",   "\\#*#"};
    std::string t = trimmed(target), h = trimmed(home);
    if (h.empty() || h[0] != '/' || t.empty()) return out;
    std::string rel;
    if (h == t) rel = "";
    else if (t == "/") rel = h.substr(1);
    else if (h.compare(0, t.size() + 1, t + "/") == 0) rel = h.substr(t.size() + 1);
    else return out;  // the home is not in the target
    std::string at = "/" + (rel.empty() ? "" : escaped(rel) + "/");
    for (const char* c : {".cache/", ".npm/_cacache/", ".cargo/registry/cache/", ".gradle/caches/"})
        out.push_back(at + c);
    return out;
}

base::Result<base::IgnoreRules> load_ignore_rules(int target_fd, const std::string& target, const IgnoreOptions& opts) {
    base::IgnoreRules rules;
    if (!opts.no_defaults) {
        const char* home = std::getenv("HOME");
        for (const auto& l : default_ignore_lines(target, home ? home : "")) rules.add_line(l);
    }
    // O_NOFOLLOW: a symlink there fails (ELOOP); O_NONBLOCK: a fifo cannot hang us.
    int fd = ::openat(target_fd, kIgnoreFile, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    std::string where = base::display_path(trimmed(target) + "/" + kIgnoreFile);
    if (fd < 0 && errno != ENOENT) {
        if (errno == ELOOP)
            return base::error(where +
                               " is a symlink; layover reads its ignore rules only from a regular file "
                               "there: replace the link with a copy of the file");
        return base::sys_error("reading " + where);
    }
    if (fd >= 0) {
        base::Fd f(fd);
        struct stat st;
        if (::fstat(fd, &st) != 0) return base::sys_error("reading " + where);
        if (!S_ISREG(st.st_mode))
            return base::error(where + " is not a regular file; make it one (gitignore syntax) or remove it");
        auto text = base::read_all(fd, kMaxIgnoreFile);
        if (!text) return base::error("reading " + where + ": " + text.error().message + " (at most 1 MiB)");
        rules.add_text(text.value());
    }
    for (const auto& g : opts.globs) rules.add_line(g);
    return rules;
}

std::string ignored_line(uint64_t n, bool saved) {
    return "+ " + base::thousands(n) + (n == 1 ? " path" : " paths") + " in ignored caches (" +
           (saved ? "left out when saved)" : "--include-ignored to show them)");
}

int parse_ignore_flag(int argc, char** argv, int* i, IgnoreOptions* opts, std::string* error) {
    std::string a = argv[*i];
    if (a == "--include-ignored") {
        opts->include_ignored = true;
        return 1;
    }
    if (a == "--no-default-ignores") {
        opts->no_defaults = true;
        return 1;
    }
    std::string v;
    if (a.compare(0, 9, "--ignore=") == 0) {
        v = a.substr(9);
    } else if (a == "--ignore") {
        if (*i + 1 >= argc) {
            *error = "--ignore needs a glob, e.g. --ignore 'build/'";
            return -1;
        }
        v = argv[++*i];
    } else {
        return 0;
    }
    if (v.empty()) {
        *error = "--ignore needs a glob, e.g. --ignore 'build/'";
        return -1;
    }
    opts->globs.push_back(v);
    return 1;
}

}  // namespace capture
