// --min-free: the free space a run leaves on the filesystem of the state
// dir, which holds the session's upper and scratch layers. On by default
// (default_floor), so a runaway writer never fills that disk to zero: run
// refuses to start below the floor (prepare_run), and the supervisor looks
// at the free space with one statvfs every 25-250 ms while the command runs,
// stopping the sandbox as --max-size does once it falls below the floor
// (LimitWatch). Free space is statvfs's f_bavail: what an unprivileged
// user can still write (root's reserved blocks left out). With it comes an
// inode floor (f_favail): a command making millions of empty files runs the
// filesystem out of inodes long before it uses the bytes of the byte floor,
// and then every program on the machine gets ENOSPC. --min-free none turns
// both off. docs/design.md, "The free-space floor".
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

// The inode floor for a filesystem of `fs_inodes` inodes (statvfs's
// f_files): 5% of them, at least kMinInodeFloor and at most
// kMaxInodeFloor, never more than a quarter of them; 0 (none) for a
// filesystem that reports no inode count (f_files 0: btrfs, some FUSE
// filesystems, whose inodes do not run out apart from their bytes). Pure.
constexpr uint64_t kMinInodeFloor = 10000;
constexpr uint64_t kMaxInodeFloor = 1000000;
uint64_t default_inode_floor(uint64_t fs_inodes);
// How many bytes of room above the byte floor one inode of room above the
// inode floor counts as when the supervisor decides when to look again: a
// writer of 1 GiB/s (kAssumedWriteRate) against one that makes 1000000
// files a second. 100000 (until attack38) was outrun: two threads of mknod
// made 316,000 a second on a 2-core VM's tmpfs, and four times the
// assumption ate a 200,000-inode filesystem's last 100,000 in one 250 ms
// interval. A look is one statvfs: looking ten times as often near the
// floor costs nothing worth counting.
constexpr uint64_t kBytesPerInode = (uint64_t{1} << 30) / 1000000;

// What statvfs says of the filesystem of `path`: its size, the free space
// an unprivileged user may still write, its inodes (0: it reports none)
// and those an unprivileged user may still take. False when it fails.
struct Space {
    uint64_t size = 0;
    uint64_t avail = 0;
    uint64_t files = 0;
    uint64_t favail = 0;
};
bool look(const std::string& path, Space* out);

// The floor a run keeps: bytes (0: none), how messages name it
// ("--min-free 4G", "--min-free 10% (25.2G)", "--min-free 1G (the
// default: ...)"), the dir whose filesystem it watches, and the inode
// floor (0: none) with its words ("the inode floor 10000 (the default: ...)").
struct Floor {
    uint64_t bytes = 0;
    std::string words;
    std::string dir;
    uint64_t inodes = 0;
    std::string inode_words;
};

// At start: the floor on the filesystem of `dir`, or the refusal when its
// free space is below it already. A filesystem statvfs cannot look at gets
// no floor.
base::Result<Floor> at_start(const Spec& s, const std::string& dir);
// The refusal's words, for free space `avail` below the floor. Pure.
std::string refusal(const Floor& f, uint64_t avail);
// The same for free inodes `favail` below the inode floor. Pure.
std::string inode_refusal(const Floor& f, uint64_t favail);

// While the command runs: "" while `avail` is at or above the floor, else
// the stop message. Pure.
std::string stopped(const Floor& f, uint64_t avail);
// The same for free inodes `favail` and the inode floor. Pure.
std::string stopped_inodes(const Floor& f, uint64_t favail);
// The room above both floors in bytes, an inode counted as kBytesPerInode,
// for when to look again (UINT64_MAX: no floor). Pure.
uint64_t room(const Floor& f, const Space& sp);

}  // namespace disk_floor
