#include "helper/cli/common/config.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/cli/common/config_args.h"

namespace cli {

namespace {

constexpr size_t kMaxConfig = 1 << 20;

std::string home_dir() {
    const char* h = std::getenv("HOME");
    return h && h[0] == '/' ? h : "";
}

}  // namespace

std::string config_path() {
    const char* x = std::getenv("XDG_CONFIG_HOME");
    std::string base = x && x[0] == '/' ? std::string(x) : home_dir().empty() ? "" : home_dir() + "/.config";
    return base.empty() ? "" : base + "/layover/config.toml";
}

bool load_config(base::toml::Doc* doc, std::string* err) {
    *doc = {};
    // Inside a sandbox the file is the sandbox's own (an agent may have
    // written it): only the host's layover reads one.
    if (std::getenv("LAYOVER_SESSION")) return true;
    std::string path = config_path();
    if (path.empty()) return true;
    std::string shown = base::display_path(path);
    base::Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) {
        if (errno == ENOENT || errno == ENOTDIR) return true;
        *err = shown + ": " + std::strerror(errno) + "; fix its permissions, or pass --no-config";
        return false;
    }
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
        *err = shown + ": not a regular file; make it one, or pass --no-config";
        return false;
    }
    if ((st.st_uid != ::geteuid() && st.st_uid != 0) || (st.st_mode & S_IWOTH)) {
        *err = shown + ": owned by uid " + std::to_string(st.st_uid) +
               " or writable by others; it sets what runs "
               "sandboxed and how, so it must be yours alone: chown it, chmod o-w it, or pass --no-config";
        return false;
    }
    std::string text;
    char buf[16384];
    while (true) {
        ssize_t n = ::read(fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            *err = shown + ": " + std::strerror(errno) + "; pass --no-config to go without it";
            return false;
        }
        if (n == 0) break;
        text.append(buf, static_cast<size_t>(n));
        if (text.size() > kMaxConfig) {
            *err = shown + ": larger than 1 MiB; a config file is a few lines";
            return false;
        }
    }
    base::toml::ParseError pe;
    if (!base::toml::parse(text, doc, &pe)) {
        *err = shown + ":" + std::to_string(pe.line) + ": " + pe.message;
        return false;
    }
    ConfigError ce;
    if (!check_config(*doc, &ce)) {
        *err = shown + ":" + std::to_string(ce.line) + ": " + ce.message;
        return false;
    }
    return true;
}

// A verb's output to a file (or /dev/full) that was not all written (a
// full disk) is said, not ended with exit 0 and a cut-off file. A pipe or a
// terminal that went away is its reader's choice (`| head`, a quit pager);
// a verb that failed has said why already.
int checked_stdout(const std::string& verb, int rc) {
    errno = 0;
    if (std::fflush(stdout) == 0 && !std::ferror(stdout)) return rc;
    if (rc != 0) return rc;  // failed already, and said why
    int e = errno;
    struct stat st;
    if (::fstat(STDOUT_FILENO, &st) != 0 || ::isatty(STDOUT_FILENO) ||
        !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode)))
        return rc;
    int fl = ::fcntl(STDOUT_FILENO, F_GETFL);
    if (e == EBADF || (fl >= 0 && (fl & O_ACCMODE) == O_RDONLY)) {  // fd 1 was closed (`>&-`): main put a
                                                                    // read-only /dev/null there (base::ensure_std_fds)
        std::fprintf(stderr,
                     "layover %s: stdout is closed, so its output was lost; run it with stdout open (> /dev/null "
                     "to drop the output)\n",
                     verb.c_str());
        return 1;
    }
    std::fprintf(stderr,
                 "layover %s: its output was not all written (%s); free space where stdout goes and run it again\n",
                 verb.c_str(), e ? std::strerror(e) : "an earlier write failed");
    return 1;
}

int with_config(int argc, char** argv, int (*fn)(int, char**)) {
    std::string verb = argv[0];
    if (verb == "config") return checked_stdout(verb, fn(argc, argv));  // reads the file itself, --no-config included
    bool known = false;
    for (const auto& v : table_verbs()) known |= v == verb;
    CliScan cli = scan_cli(verb, std::vector<std::string>(argv + 1, argv + argc));
    std::vector<std::string> args{verb};
    std::string lines;
    if (known && !cli.no_config) {
        base::toml::Doc doc;
        std::string err;
        if (!load_config(&doc, &err)) {
            std::fprintf(stderr, "layover %s: %s\n", verb.c_str(), err.c_str());
            return verb == "run" ? 125 : 2;
        }
        for (const auto& s : settings_for(doc, verb)) {
            for (auto& a : setting_args(s, home_dir())) args.push_back(std::move(a));
            lines += (lines.empty() ? "" : ", ") + std::to_string(s.line);
        }
    }
    args.insert(args.end(), cli.args.begin(), cli.args.end());
    std::vector<char*> ptrs;
    for (auto& a : args) ptrs.push_back(a.data());
    ptrs.push_back(nullptr);
    int rc = checked_stdout(verb, fn(static_cast<int>(args.size()), ptrs.data()));
    if (rc == 2 && !lines.empty())
        std::fprintf(stderr,
                     "layover: %s also had options from %s (line%s %s); 'layover config %s' shows them, "
                     "--no-config leaves them out\n",
                     verb.c_str(), base::display_path(config_path()).c_str(),
                     lines.find(',') == std::string::npos ? "" : "s", lines.c_str(), verb.c_str());
    return rc;
}

}  // namespace cli
