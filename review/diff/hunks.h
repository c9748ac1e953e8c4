// Hunks of a text diff (pure): the grouping `layover diff` prints, counted
// and numbered, and a text with only some of them applied (`apply --hunks`).
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "helper/base/result.h"
#include "review/diff/algo.h"

namespace review {

constexpr int kHunkContext = 3;  // what `layover diff` shows, and what hunk numbers count

// One hunk: change groups [g0, g1] and the line ranges shown, context included.
struct HunkSpan {
    size_t g0, g1;
    size_t a_start, a_end, b_start, b_end;
};

// Groups separated by at most 2*context unchanged lines share a hunk, as git's.
std::vector<HunkSpan> hunk_spans(const std::vector<Group>& groups, size_t a_lines, int context);

// Number of hunks `layover diff` shows between two texts.
size_t count_hunks(std::string_view old_text, std::string_view new_text, int context = kHunkContext);

// old_text with the hunks whose take[i] is set (i 0-based) replaced by their
// new lines, every other line as it was. take.size() must be the hunk count.
std::string apply_hunks(std::string_view old_text, std::string_view new_text, const std::vector<bool>& take,
                        int context = kHunkContext);

// `--hunks PATH:N[,M...]`: the path (before the last ':') and 1-based numbers.
struct HunkPick {
    std::string path;
    std::vector<size_t> numbers;
};
base::Result<HunkPick> parse_hunk_pick(const std::string& arg);

// Picks by path: numbers to take (--hunks) and to leave (--exclude-hunks).
struct HunkChoice {
    std::vector<size_t> take, leave;  // 1-based; take empty: all but `leave`
    // apply -p after `s` (split) or `e` (edit): the file's content as chosen,
    // and the fingerprint of the real content it was chosen against (take:
    // the hunks it took all or part of, for the report).
    std::shared_ptr<const std::string> content = nullptr;
    std::string against = {};
};
using HunkChoices = std::map<std::string, HunkChoice>;

// Which of `count` hunks of `path` a choice applies; an error names a number
// that does not exist.
base::Result<std::vector<bool>> choose_hunks(const std::string& path, const HunkChoice& c, size_t count);

}  // namespace review
