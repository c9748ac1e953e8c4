#include "helper/sandbox/limits.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "helper/store/owner_ns.h"

namespace limits {

bool parse_duration(const std::string& text, uint64_t* ms) {
    if (text == "none" || text == "0") {
        *ms = 0;
        return true;
    }
    if (text.empty()) return false;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    std::string unit(end);
    double mult = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : -1;
    if (end == text.c_str() || mult < 0 || !(v > 0) || std::isinf(v) || v * mult > 365.0 * 86400) return false;
    *ms = static_cast<uint64_t>(std::llround(v * mult * 1000));
    return *ms > 0;
}

std::string format_duration(uint64_t ms) {
    uint64_t s = ms / 1000;
    if (s == 0) return std::to_string(ms) + "ms";
    std::string out;
    for (auto [unit, secs] : {std::pair<const char*, uint64_t>{"d", 86400}, {"h", 3600}, {"m", 60}, {"s", 1}})
        if (s >= secs) {
            out += std::to_string(s / secs) + unit;
            s %= secs;
        }
    return out;
}

bool parse_bytes(const std::string& text, uint64_t* bytes) {
    if (text == "none" || text == "0") {
        *bytes = 0;
        return true;
    }
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;
    char* end = nullptr;
    double v = std::strtod(text.c_str(), &end);
    std::string unit(end);
    if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
    if (unit.size() == 2 && (unit[1] == 'i' || unit[1] == 'I')) unit.pop_back();
    double mult = unit.empty()                 ? 1
                  : unit == "k" || unit == "K" ? 1024.0
                  : unit == "m" || unit == "M" ? 1024.0 * 1024
                  : unit == "g" || unit == "G" ? 1024.0 * 1024 * 1024
                  : unit == "t" || unit == "T" ? 1024.0 * 1024 * 1024 * 1024
                                               : -1;
    if (mult < 0 || !(v > 0) || v * mult > 1e18) return false;
    *bytes = static_cast<uint64_t>(v * mult);
    return *bytes > 0;
}

std::string format_bytes(uint64_t b) {
    const char* units[] = {"B", "K", "M", "G", "T"};
    int u = 0;
    double v = static_cast<double>(b);
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f%s" : "%.1f%s", v, units[u]);
    return buf;
}

base::Result<void> apply_in_child(const Limits& l) {
    auto set = [](int res, uint64_t v, const char* what) -> base::Result<void> {
        struct rlimit rl = {static_cast<rlim_t>(v), static_cast<rlim_t>(v)};
        struct rlimit cur;
        // Never raise a limit the caller already has lower.
        if (::getrlimit(res, &cur) == 0 && cur.rlim_max != RLIM_INFINITY && cur.rlim_max < rl.rlim_max)
            rl.rlim_cur = rl.rlim_max = cur.rlim_max;
        if (::setrlimit(res, &rl) != 0) return base::sys_error(std::string("setting ") + what);
        return base::Ok();
    };
    if (l.max_pids) TRY_VOID(set(RLIMIT_NPROC, l.max_pids, "--max-pids"));
    if (l.max_size) TRY_VOID(set(RLIMIT_FSIZE, l.max_size, "--max-size"));
    if (l.max_memory) TRY_VOID(set(RLIMIT_AS, l.max_memory, "--max-memory"));
    return base::Ok();
}

namespace {

uint64_t walk(int dirfd) {
    uint64_t total = 0;
    DIR* d = ::fdopendir(dirfd);
    if (!d) {
        ::close(dirfd);
        return 0;
    }
    while (struct dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
        struct stat st;
        if (::fstatat(::dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        total += static_cast<uint64_t>(st.st_blocks) * 512;
        if (S_ISDIR(st.st_mode)) {
            int sub = ::openat(::dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) total += walk(sub);
        }
    }
    ::closedir(d);
    return total;
}

}  // namespace

base::Result<uint64_t> upper_usage(const std::string& upper_dir) {
    TRY(std::string text, capture::in_owner_ns([&]() -> base::Result<std::string> {
            int fd = ::open(upper_dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) return base::sys_error("opening the upper layer");
            return std::to_string(walk(fd));
        }));
    return std::strtoull(text.c_str(), nullptr, 10);
}

}  // namespace limits
