// Three-way merge of line-based text (pure), as `git merge-file` does: the
// changes from base to ours and from base to theirs are combined; where they
// touch or overlap and differ, that is a conflict, reported with its line
// ranges and, when asked, written with git's conflict markers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace review {

// The biggest file apply 3-way merges (review/apply/merge.cc), which `diff`
// (DiffScope::max_load) and `apply -p` read whole to show that merge.
constexpr uint64_t kMaxMerge = 64ull << 20;

// What the merges of one apply or diff hold together (each merge holds its
// two sides and its result until it is written or shown). The candidates, a
// file the patch carries an original for whose real file and new content are
// each within kMaxMerge, are counted in path order, each taking the sizes of
// its two sides; one that would pass kMaxMergeTotal is not merged (apply: a
// conflict naming the limit; diff: shown by its window, its note says so),
// and the count goes on. One file of the biggest size always fits. Three
// ~50 MiB pairs merged together took 788 MiB; one takes ~420 (leftovers4).
constexpr uint64_t kMaxMergeTotal = 2 * kMaxMerge;
struct MergeBudget {
    uint64_t used = 0;
    bool take(uint64_t real_size, uint64_t new_size) {
        if (real_size > kMaxMerge || new_size > kMaxMerge || real_size + new_size > kMaxMergeTotal - used) return false;
        used += real_size + new_size;
        return true;
    }
};
// Said of a file MergeBudget left out: why, and how to merge it.
std::string over_merge_budget(const std::string& path);

// Line ranges of one conflict: 1-based first line and line count on each side
// (a count of 0: an insertion point after line `first - 1`).
struct LineRange {
    size_t first = 0, count = 0;
};
struct MergeConflict {
    LineRange base, ours, theirs;
};

struct MergeResult {
    std::string text;  // the merge; with conflicts, ours at each one unless markers were asked for
    std::vector<MergeConflict> conflicts;
};

struct MergeLabels {
    std::string ours = "ours", theirs = "theirs";
};

// ours: the base's changes made one way (the real file now); theirs: made the
// other (the patch's new content). markers: write each conflict as
// <<<<<<< ours / ======= / >>>>>>> theirs.
MergeResult merge3(std::string_view base, std::string_view ours, std::string_view theirs, bool markers = false,
                   const MergeLabels& labels = {});

// "12-14" or "12" (a count of 0 or 1), for messages.
std::string range_text(const LineRange& r);

}  // namespace review
