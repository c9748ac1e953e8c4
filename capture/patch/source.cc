// Patch::open_source (SESSION|PATCH) and the shared limit flags.
#include <dirent.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>

#include "capture/patch/reader.h"
#include "capture/patch/reader_impl.h"
#include "capture/patch/save.h"
#include "helper/base/text.h"
#include "helper/store/session/session.h"

namespace capture {

namespace {

constexpr char kCapturePrefix[] = ".capture-";

// A session's capture for apply, diff or show is named only while it is
// written (save's temporary `..capture-NAME-PID-RAND.tar.zst.tmp-N`, renamed
// to `.capture-NAME-PID-RAND.tar.zst`, unlinked once open; both unlinked on
// SIGINT, SIGTERM, SIGHUP); one whose verb was SIGKILLed meanwhile, PID gone,
// is removed here (found by the attack pass of 27 Nov: each killed apply or
// diff of a session left a full copy of it in the state dir, for good).
void sweep_dead_captures(const std::string& state) {
    DIR* d = ::opendir(state.c_str());
    if (!d) return;
    const size_t prefix = sizeof(kCapturePrefix) - 1;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        std::string stem = n.rfind(std::string(".") + kCapturePrefix, 0) == 0 ? n.substr(1) : n;
        size_t ext = stem.find(".tar.zst");
        if (stem.rfind(kCapturePrefix, 0) != 0 || ext == std::string::npos ||
            (ext + 8 != stem.size() && stem.compare(ext + 8, 5, ".tmp-") != 0))
            continue;
        stem.resize(ext);
        size_t r = stem.rfind('-');
        size_t p = r == std::string::npos || r == 0 ? std::string::npos : stem.rfind('-', r - 1);
        if (p == std::string::npos || p < prefix) continue;
        std::string pid = stem.substr(p + 1, r - p - 1);
        if (pid.empty() || pid.size() > 9 || pid.find_first_not_of("0123456789") != std::string::npos) continue;
        if (::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH) ::unlinkat(::dirfd(d), n.c_str(), 0);
    }
    ::closedir(d);
}

bool names_a_file(const std::string& arg) {
    if (arg.find('/') != std::string::npos) return true;
    return arg.size() > 8 && arg.compare(arg.size() - 8, 8, ".tar.zst") == 0;
}

bool existing_file(const std::string& arg) {
    struct stat st;
    return ::stat(arg.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

bool parse_size(const char* s, uint64_t* out) {
    if (!s || !*s) return false;
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 10);
    if (errno || end == s || s[0] == '-') return false;
    int shift = 0;
    if (*end) {
        switch (*end) {
            case 'K':
            case 'k': shift = 10; break;
            case 'M':
            case 'm': shift = 20; break;
            case 'G':
            case 'g': shift = 30; break;
            case 'T':
            case 't': shift = 40; break;
            default: return false;
        }
        if (end[1]) return false;
    }
    if (shift && v > (~0ull >> shift)) return false;
    *out = static_cast<uint64_t>(v) << shift;
    return true;
}

}  // namespace

base::Result<Patch> Patch::open_source(const std::string& arg, const Limits& limits, const IgnoreOptions& ignore,
                                       const StepRange& steps) {
    if (names_a_file(arg)) {
        // `apply ~/project`, `diff ./`: the tree, not a patch ("is not a regular file").
        struct stat st;
        if (::stat(arg.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
            if (auto state = session::state_dir(); state.ok())
                if (std::string dir = session::directory_given(*state, arg, "a patch file or a session"); !dir.empty())
                    return base::error(dir);
        return open(arg, limits);
    }
    if (existing_file(arg)) {
        // A file here may have come from anywhere (an applied session, a
        // clone): it must not stand in for the session of that name.
        auto state = session::state_dir();
        if (state.ok() && session::find(*state, arg).ok())
            return base::error("'" + base::display_path(arg) + "' names both a session and the file ./" +
                               base::display_path(arg) + " here; write ./" + base::display_path(arg) +
                               " for the file, or run this from another directory for the session");
        return open(arg, limits);
    }
    return open_session(arg, limits, ignore, steps);
}

base::Result<Patch> Patch::open_session(const std::string& arg, const Limits& limits, const IgnoreOptions& ignore,
                                        const StepRange& steps) {
    TRY(std::string state, session::state_dir());
    TRY(session::Info info, session::find(state, arg));
    sweep_dead_captures(state);
    std::random_device rd;
    std::string tmp = state + "/" + kCapturePrefix + info.meta.name + "-" + std::to_string(::getpid()) + "-" +
                      std::to_string(rd() % 1000000000u) + ".tar.zst";
    SaveOptions so;
    so.ignore = ignore;
    so.durable = false;
    so.steps = steps;
    so.doing = "reading";
    TRY_VOID(save_session(info, tmp, so));  // a SIGINT, SIGTERM or SIGHUP meanwhile unlinks it
    auto p = open(tmp, limits);
    // Read through its fd from here on: gone from the state dir at once, so
    // a kill of the verb (apply, diff, show of a session) leaves no copy.
    ::unlink(tmp.c_str());
    if (!p) return p.error();
    p->impl_->from_session = true;
    return p;
}

int parse_limit_flag(int argc, char** argv, int* i, Limits* l, std::string* error) {
    std::string a = argv[*i];
    std::string value;
    bool inline_value = false;
    auto eq = a.find('=');
    if (eq != std::string::npos) {
        value = a.substr(eq + 1);
        a.resize(eq);
        inline_value = true;
    }
    uint64_t* field = a == "--max-members"         ? &l->max_members
                      : a == "--max-stored-bytes"  ? &l->max_stored_bytes
                      : a == "--max-logical-bytes" ? &l->max_logical_bytes
                      : a == "--max-name-len"      ? &l->max_name_len
                      : a == "--max-pax-header"    ? &l->max_pax_header
                                                   : nullptr;
    if (!field) return 0;
    if (!inline_value) {
        if (*i + 1 >= argc) {
            *error = a + " needs a value";
            return -1;
        }
        value = argv[++*i];
    }
    if (!parse_size(value.c_str(), field)) {
        *error = a + ": invalid size '" + value + "' (a number, optionally ending in K, M, G or T)";
        return -1;
    }
    return 1;
}

}  // namespace capture
