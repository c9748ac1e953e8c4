// The disk usage of a session's upper layer: allocated blocks (st_blocks),
// summed over a walk that follows no symlink. Shared by `layover sessions`
// (sizes) and run's --max-size watch (helper/sandbox/limits/limits.cc).
#pragma once
#include <cstdint>

namespace session {

struct Usage {
    uint64_t bytes = 0;
    uint64_t entries = 0;  // non-directories: a cheap upper bound of a live session's changes
    // False when part of the tree could not be walked: directories nested
    // deeper than kMaxUsageDepth, or no fd left to open one. The sandboxed
    // program makes this tree: a hidden subtree must not pass for an empty one.
    bool complete = true;
};

constexpr int kMaxUsageDepth = 1000;

// Takes ownership of dirfd (closed at the end).
Usage tree_usage(int dirfd);

}  // namespace session
