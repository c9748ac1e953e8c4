// A tar member's headers for the common members of a patch, written here
// rather than by libarchive (docs/design.md, "Tar headers written by
// hand"): byte for byte what libarchive's pax writer makes for them (a
// plain ustar header, after a pax 'x' header holding only the `mtime`
// record when the mtime has nanoseconds). Anything else (long or
// non-ASCII names and link targets, xattrs, sparse files, huge sizes or
// odd times) is left to libarchive. Pure.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace capture {

inline constexpr size_t kTarHeadMax = 3 * 512;

struct TarHead {
    std::string_view path;  // a dir's without its trailing '/'
    char type = '0';        // '0' file, '1' hard link, '2' symlink, '5' dir, '6' fifo
    uint32_t mode = 0;      // permission bits (07777)
    int64_t mtime_ns = 0;
    uint64_t size = 0;      // a file's; 0 for the others
    std::string_view link;  // a symlink's target, or the earlier member a hard link names
};

// The headers of `h` in out: their size (a multiple of 512), or 0 when this
// writer does not make such a member (then libarchive must).
size_t tar_head(const TarHead& h, char* out);

// The zeros that end a member's data of `size` bytes (to the 512-byte block).
inline size_t tar_padding(uint64_t size) { return static_cast<size_t>((512 - size % 512) % 512); }

}  // namespace capture
