// The real entries a hiding upper dir lacks (an opaque dir over a real dir:
// `rm -rf d` then d remade). Pure: compares two sorted listings. The walk
// reports each such entry as a deletion, in name order among the upper's.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "helper/base/dir.h"

namespace capture {

// The names of `lower` that `upper` lacks (both sorted bytewise), sorted.
std::vector<std::string> only_below(const std::vector<base::DirEntry>& upper, const std::vector<base::DirEntry>& lower);

// Which of `gone` (sorted) a walk of upper[from, to) reports: those after
// upper[from-1] (all, from 0) and before upper[to] (all, to the end). Two
// halves [0, s) and [s, n) thus share the names between them out, once each.
std::pair<size_t, size_t> gone_span(const std::vector<std::string>& gone, const std::vector<base::DirEntry>& upper,
                                    size_t from, size_t to);

}  // namespace capture
