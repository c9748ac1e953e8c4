// Content fingerprints (XXH3-128) and sparse-aware file reading.
//
// A fingerprint covers a file's data segments and its hole map, never the
// zeros of a hole: the data bytes in order, then a digest of the segment map
// (offset, length pairs, little-endian u64, adjacent segments merged), then
// the logical size. docs/patch-format.md specifies it for independent readers.
#pragma once
#include <xxhash.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "helper/base/result.h"

namespace capture {

class Fingerprint {
public:
    Fingerprint();
    ~Fingerprint();
    Fingerprint(const Fingerprint&) = delete;
    Fingerprint& operator=(const Fingerprint&) = delete;
    // Data at a logical offset; offsets never go backwards.
    void data(uint64_t offset, const void* p, size_t len);
    // 32 lowercase hex digits.
    std::string finish(uint64_t logical_size);

private:
    void close_segment();
    XXH3_state_t* data_;
    XXH3_state_t* map_;
    uint64_t seg_start_ = 0, seg_len_ = 0;
    bool in_seg_ = false;
};

std::string fingerprint_bytes(std::string_view s);

using Segments = std::vector<std::pair<uint64_t, uint64_t>>;  // (offset, length) of data

// Data segments of an open file of the given size (SEEK_DATA/SEEK_HOLE; the
// whole file when the filesystem cannot tell).
base::Result<Segments> data_segments(int fd, uint64_t size);

// Merge segments across the smallest holes (their zeros then count as data)
// until at most max_segments (at least 1) remain: a reader refuses a sparse
// map longer than its limit. Segments ascending and disjoint, as above.
void fit_segments(Segments* segs, uint64_t max_segments);

// Read a file's data segments in chunks of at most `chunk` bytes.
base::Result<void> read_segments(int fd, const Segments& segs,
                                 const std::function<base::Result<void>(uint64_t, const char*, size_t)>& fn);

// Text as save's originals take it: no NUL in the first kTextProbe bytes.
inline constexpr size_t kTextProbe = 8000;
// With `text`: set to whether the file has no holes (its fingerprint is then
// fingerprint_bytes of its content) and is text, found in the same pass.
base::Result<std::string> fingerprint_fd(int fd, uint64_t size, bool* text = nullptr);

// Byte equality of two open files of the same size; regions that are holes
// in both are skipped without reading.
base::Result<bool> same_content(int a, int b, uint64_t size);

}  // namespace capture
