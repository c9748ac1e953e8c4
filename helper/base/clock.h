// Wall-clock time as layover records it (meta.json, manifests).
#pragma once
#include <cstdint>
#include <string>

namespace base {

// Now, in UTC, as RFC 3339 with second precision: 2026-11-25T10:59:40Z.
std::string utc_now_rfc3339();

// Seconds since the epoch of such a time ("...Z", or with a fraction,
// ignored); -1 when it is not one.
int64_t parse_rfc3339(const std::string& s);

// A file time as int64 nanoseconds, as patches and records hold it. Seconds
// past what that holds (before 1677, after 2262-04-11; ext4 stores times to
// 2446, btrfs any int64) are clamped to the nearest second it holds: a year
// 2400 mtime stays the latest time a patch can carry, never wraps to 1861.
constexpr int64_t kTimeNsMaxSeconds = 9223372035;
constexpr int64_t time_ns(int64_t sec, int64_t nsec) {
    if (sec > kTimeNsMaxSeconds) return kTimeNsMaxSeconds * 1000000000 + 999999999;
    if (sec < -kTimeNsMaxSeconds) return -kTimeNsMaxSeconds * 1000000000;
    return sec * 1000000000 + nsec;
}

}  // namespace base
