// Path selection for `apply --only PATH` and `--exclude GLOB` (pure).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace review {

// Shell-style match of one pattern against a whole relative path:
// `*` and `?` never cross '/', `**` as a whole component matches any number
// of components (zero included), `[abc]`/`[a-z]`/`[!x]` are classes, and a
// backslash escapes the next byte. Byte-wise: names need not be UTF-8.
bool glob_match(std::string_view pattern, std::string_view path);

// True when `path` equals `prefix` or lies beneath it ("a/b" is under "a").
bool path_is_under(std::string_view path, std::string_view prefix);

// The --only/--exclude selection. A pattern without '/' matches any single
// component (like .gitignore: `*.log` anywhere); one with '/' matches the
// path from the target root. Excluding a directory excludes its subtree.
class PathFilter {
public:
    PathFilter() = default;
    PathFilter(std::vector<std::string> only, std::vector<std::string> exclude);

    bool empty() const { return only_.empty() && exclude_.empty(); }
    // The path itself is to be applied.
    bool selects(std::string_view path) const;
    // The path is needed to reach a selected path (an ancestor of an --only
    // path), or is selected itself.
    bool needed(std::string_view path) const;
    bool excluded(std::string_view path) const;
    // Some --only path lies strictly beneath `path`.
    bool selects_strictly_beneath(std::string_view path) const;

private:
    std::vector<std::string> only_;
    std::vector<std::string> exclude_;
};

// Normalise a user-given --only path: strip "./" prefixes and trailing '/'.
std::string normalize_rel(std::string_view p);

}  // namespace review
