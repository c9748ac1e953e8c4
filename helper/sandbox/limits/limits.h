// Resource limits of a run (--timeout, --max-pids, --max-size,
// --max-memory, --min-free): parsing is pure and unit-tested; the child applies the
// rlimits; the supervisor enforces the timeout and watches the upper layer.
#pragma once
#include <cstdint>
#include <string>

#include "helper/base/result.h"
#include "helper/sandbox/limits/disk_floor.h"

struct Limits {
    uint64_t timeout_ms = 24ull * 3600 * 1000;  // 0: none
    uint64_t max_pids = 4096;                   // RLIMIT_NPROC; 0: unlimited
    uint64_t max_size = 0;                      // bytes of the upper layer; 0: none
    uint64_t max_memory = 0;                    // bytes; 0: none
    // --max-memory's delegated cgroup v2 (helper/sandbox/limits/memcg.h), which
    // setup enters; empty: RLIMIT_AS per process instead.
    std::string memory_cgroup;
    // --min-free's floor on the state dir's filesystem, resolved by
    // prepare_run (helper/sandbox/limits/disk_floor.h); bytes 0: none.
    disk_floor::Floor min_free;
};

namespace limits {

// "90s", "5m", "2h", "1d", "1.5h", "300" (seconds), "none" or "0" (no limit).
bool parse_duration(const std::string& text, uint64_t* ms);
// "1h30m"-style text for messages: the largest units that fit.
std::string format_duration(uint64_t ms);
// Sizes as --tmp-size takes them (overlay::parse_size: 4096, 512k, 500M,
// 2G), without percentages; "none" or "0": none.
bool parse_bytes(const std::string& text, uint64_t* bytes);
std::string format_bytes(uint64_t bytes);

// In the child, after its nested user namespace: RLIMIT_NPROC (counted per
// user namespace since Linux 5.14), RLIMIT_FSIZE at --max-size (one file
// cannot outrun the watch), RLIMIT_AS at --max-memory unless a cgroup
// holds the sandbox; and RLIMIT_RTPRIO and RLIMIT_NICE at 0 always (no
// realtime scheduling, no priority above the caller's).
base::Result<void> apply_in_child(const Limits& l);

// The command and all it starts are the OOM killer's first choice, before
// the user's own programs (and the supervisor, which keeps the session):
// oom_score_adj raised to kOomScoreAdj unless the caller's is higher
// already. Best effort. (A process may lower it again, down to the
// caller's: a preference, not a limit.)
inline constexpr int kOomScoreAdj = 500;
void prefer_oom_kill();

}  // namespace limits
