// The zstd frame format, as far as the patch reader needs it without
// decoding (RFC 8878, 3.1.1): the checks every frame must pass, and where a
// frame ends, found by walking its block headers. Pure functions over bytes,
// plus a walk that reads headers through a callback.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace capture {

// "" when a frame may start with these bytes (at least 5: magic and the
// frame header descriptor), else why a patch cannot hold it: a skippable
// frame, a bad magic, or no content checksum.
std::string frame_start_problem(const unsigned char* p, size_t n);

// The frame header's size from its first 5 bytes, 0 when it is malformed
// (a reserved bit set).
size_t frame_header_size(const unsigned char* p);

// The window a decoder needs for the frame (Window_Size, or the content
// size of a single-segment frame), from its header; nullopt when fewer than
// the header's bytes are given or it is malformed.
std::optional<uint64_t> frame_window(const unsigned char* p, size_t n);

struct BlockHeader {
    bool last = false;
    unsigned type = 0;                                        // 0 raw, 1 RLE, 2 compressed, 3 reserved
    uint32_t size = 0;                                        // Block_Size field
    uint64_t stored() const { return type == 1 ? 1 : size; }  // bytes after the header
};
BlockHeader block_header(const unsigned char* p);  // 3 bytes

// Reads exactly n bytes at off into p; false when fewer are there.
using ReadAt = std::function<bool(uint64_t off, unsigned char* p, size_t n)>;

// Where the frame starting at off ends (just past its checksum), walking its
// block headers; nullopt when it does not look like a complete layover frame
// within size bytes. A nullopt only means "decode it to find out": the
// decoder then reports the exact problem.
std::optional<uint64_t> frame_end(const ReadAt& read, uint64_t off, uint64_t size);

}  // namespace capture
