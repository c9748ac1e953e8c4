// --min-free: the free space a run leaves on the filesystem of the state
// dir, which holds the session's upper and scratch layers. On by default
// (default_floor), so a runaway writer never fills that disk to zero: run
// refuses to start below the floor (prepare_run), and the supervisor looks
// at the free space with one statvfs every 25-250 ms while the command runs,
// stopping the sandbox as --max-size does once it falls below the floor
// (LimitWatch). Free space is statvfs's f_bavail: what an unprivileged
// user can still write (root's reserved blocks left out). docs/design.md,
// "The free-space floor".
#pragma once
#include <cstdint>
#include <string>

#include "helper/base/result.h"

namespace disk_floor {

// --min-free as given: the --tmp-size forms (4096, 512k, 500M, 2G, 10%);
// "none" or "0": no floor; not given: the default.
struct Spec {
    enum Kind { Default, None, Bytes, Percent } kind = Default;
    uint64_t value = 0;  // bytes, or a percentage of the filesystem's size
};
// False for a bad value (under 1M, a percentage outside 1-50).
bool parse(const std::string& text, Spec* out);

// The default floor for a filesystem of `fs_bytes`: 5% of it, at least
// kMinFloor and at most kMaxFloor, and never more than a quarter of it (a
// filesystem under 1 GiB). Pure.
constexpr uint64_t kMinFloor = uint64_t{256} << 20;
constexpr uint64_t kMaxFloor = uint64_t{1} << 30;
uint64_t default_floor(uint64_t fs_bytes);
// The floor in bytes (0: none). Pure.
uint64_t resolve(const Spec& s, uint64_t fs_bytes);

// What statvfs says of the filesystem of `path`: its size, and the free
// space an unprivileged user may still write. False when it fails.
struct Space {
    uint64_t size = 0;
    uint64_t avail = 0;
};
bool look(const std::string& path, Space* out);

// The floor a run keeps: bytes (0: none), how messages name it
// ("--min-free 4G", "--min-free 10% (25.2G)", "--min-free 1G (the
// default: ...)"), and the dir whose filesystem it watches.
struct Floor {
    uint64_t bytes = 0;
    std::string words;
    std::string dir;
};

// At start: the floor on the filesystem of `dir`, or the refusal when its
// free space is below it already. A filesystem statvfs cannot look at gets
// no floor.
base::Result<Floor> at_start(const Spec& s, const std::string& dir);
// The refusal's words, for free space `avail` below the floor. Pure.
std::string refusal(const Floor& f, uint64_t avail);

// While the command runs: "" while `avail` is at or above the floor, else
// the stop message. Pure.
std::string stopped(const Floor& f, uint64_t avail);

}  // namespace disk_floor
