// Line diff: Myers' O((N+M)D) algorithm in linear space (middle snake,
// divide and conquer), with a cost cap that trades minimality for bounded
// time on pathological inputs, as GNU diff and git's xdiff do. Pure.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace review {

// Lines of a text, each keeping its '\n'; the last one may lack it.
std::vector<std::string_view> split_lines(std::string_view text);

struct LineDiff {
    std::vector<char> del;  // del[i]: a[i] is not in the common subsequence
    std::vector<char> ins;  // ins[j]: b[j] is not in the common subsequence
};

struct DiffTuning {
    // Edit cost after which a split is accepted without proof of minimality
    // (0: automatic, about sqrt(N+M), at least 256).
    uint64_t max_cost = 0;
    // When set, receives the number of diagonal steps taken: a machine-
    // independent measure of the work done, for tests of the complexity.
    uint64_t* work = nullptr;
};

LineDiff diff_lines(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
                    const DiffTuning& tuning = {});

// A change group: a[a0, a1) replaced by b[b0, b1) (one side may be empty).
struct Group {
    size_t a0, a1, b0, b1;
};
std::vector<Group> groups_of(const LineDiff& d);

}  // namespace review
