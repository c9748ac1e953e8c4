#include "helper/sandbox/limits/limits.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>

#include "helper/base/fd.h"
#include "helper/base/log2.h"
#include "helper/base/text.h"
#include "overlay/options.h"

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
    *ms = base::round_u64(v * mult * 1000);
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
    unsigned long long n = 0;
    if (text.find('%') != std::string::npos || !overlay::parse_size(text, 0, &n)) return false;
    *bytes = n;
    return true;
}

std::string format_bytes(uint64_t b) { return base::bytes_short(b); }

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
    if (l.max_memory && l.memory_cgroup.empty()) TRY_VOID(set(RLIMIT_AS, l.max_memory, "--max-memory"));
    // No realtime scheduling, whatever the caller may have (an audio group's
    // `rtprio 95`): one SCHED_FIFO busy thread per core would leave the host
    // 5% of its CPUs until --timeout (attack17).
    TRY_VOID(set(RLIMIT_RTPRIO, 0, "the realtime priority limit"));
    // Nor a nice value below the one it starts with (a limits.conf `nice -10`).
    TRY_VOID(set(RLIMIT_NICE, 0, "the nice limit"));
    return base::Ok();
}

void prefer_oom_kill() {
    base::Fd fd(::open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC));
    char buf[16] = {};
    if (!fd.valid() || ::read(fd.get(), buf, sizeof buf - 1) <= 0 || std::atoi(buf) >= kOomScoreAdj) return;
    std::string v = std::to_string(kOomScoreAdj) + "\n";
    (void)::pwrite(fd.get(), v.data(), v.size(), 0);
}

}  // namespace limits
