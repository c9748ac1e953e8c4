// Big files in `diff` (issue 20): only the part that differs is held in
// memory. While the new content streams by (the patch's payload, in order),
// it is compared with the real file, read alongside with pread, at the same
// offset (the common prefix) and aligned at the end (the common suffix).
// What lies between, widened to whole lines plus the context, is the window
// read again and diffed; everything outside it is identical on both sides,
// as GNU diff trims before it diffs.
#pragma once
#include <cstdint>
#include <optional>

#include "helper/base/result.h"

namespace review {

struct TrimWindow {
    uint64_t start = 0;                 // first byte of the window, on both sides (a line start)
    uint64_t old_end = 0, new_end = 0;  // one past its last byte on each side
    uint64_t first_line = 0;            // lines before start (hunk numbers)
    bool identical = false;             // the two contents are equal
    bool binary = false;                // a NUL in the first 8000 bytes of either file (git's rule)
};

class Trim {
public:
    Trim(int old_fd, uint64_t old_size, uint64_t new_size);
    // The new content, in order; a jump (a hole) makes the file untrimmable.
    base::Result<void> feed(uint64_t offset, const char* data, size_t len);
    // After the whole new content: the window, or nothing when it is wider
    // than `cap` on either side (or the new file was sparse).
    base::Result<std::optional<TrimWindow>> finish(int context, uint64_t cap);

private:
    base::Result<size_t> pread_some(char* buf, size_t len, uint64_t off) const;
    int fd_;
    uint64_t old_size_, new_size_;
    uint64_t pos_ = 0;  // next new offset expected
    bool sparse_ = false;
    bool prefix_open_ = true;  // no difference seen yet
    uint64_t prefix_ = 0;      // common prefix length (once closed)
    uint64_t prefix_lines_ = 0;
    uint64_t diff_end_ = 0;  // new offset one past the last byte unlike its end-aligned twin
    bool new_binary_ = false;
};

}  // namespace review
