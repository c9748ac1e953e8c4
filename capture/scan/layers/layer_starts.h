// When each layer of a session's stack began (ScanOptions::layer_start):
// the run or checkpoint that made it, from its step record's `start` or
// steps/live.json's, to the second (floored: never later than it began).
// Read when first asked, once per layer, from any of the walk's threads.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace capture {

// steps: each layer's step number in the order of the scan's layers (0:
// the live upper, -1: none, e.g. compare's layer). A layer with no start
// (none recorded, or unreadable) gives 0: the session's start is used.
std::function<int64_t(uint32_t)> layer_starts(const std::string& session_dir, std::vector<int> steps);

}  // namespace capture
