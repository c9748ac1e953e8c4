// Shell-style globs and path selection (pure): `apply --only`/`--exclude`,
// the PATH... filters of status/diff/save/apply, and the ignore rules.
#pragma once
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace base {

// Shell-style match of one pattern against a whole relative path:
// `*` and `?` never cross '/', `**` as a whole component matches any number
// of components (zero included), `[abc]`/`[a-z]`/`[!x]` are classes, and a
// backslash escapes the next byte. Byte-wise: names need not be UTF-8.
bool glob_match(std::string_view pattern, std::string_view path);

// True when `path` equals `prefix` or lies beneath it ("a/b" is under "a").
bool path_is_under(std::string_view path, std::string_view prefix);

// True when a proper ancestor of `path` ("a" or "a/b" for "a/b/c") is in `dirs`.
bool has_ancestor_in(std::string_view path, const std::set<std::string, std::less<>>& dirs);

// True when `p` holds '*', '?' or '[': a glob, not a plain path.
bool has_glob_chars(std::string_view p);

// A glob selects `path` when it matches the path or one of its ancestors
// (a directory brings its subtree). Without '/' it matches any single
// component (like .gitignore: `*.log` anywhere); with '/' the path from the
// target root.
bool glob_selects(std::string_view glob, std::string_view path);

// A pattern holding '*', '?' or '[' only backslash-escaped (as a program
// quotes a name it got from a session: `a\\*`), with or without a leading
// '/', names one path: that path, unescaped. nullopt: a glob (or none).
std::optional<std::string> escaped_literal(std::string_view p);

// The --only/--exclude (and `-- PATH...`) selection. An --only entry is a
// path (its subtree is selected; escaped_literal's patterns are paths too)
// or a glob (as glob_selects); an --exclude entry is a glob. Excluding a
// directory excludes its subtree.
class PathFilter {
public:
    PathFilter() = default;
    PathFilter(std::vector<std::string> only, std::vector<std::string> exclude);

    bool empty() const { return only_.empty() && only_globs_.empty() && exclude_.empty(); }
    // The path itself is to be applied.
    bool selects(std::string_view path) const;
    // The path is needed to reach a selected path (an ancestor of an --only
    // path), or is selected itself.
    bool needed(std::string_view path) const;
    bool excluded(std::string_view path) const;
    // Some --only path lies strictly beneath `path` (or, for globs, some
    // selected path given to note()).
    bool selects_strictly_beneath(std::string_view path) const;
    // A candidate path (a change of the patch): when an --only glob selects
    // it, its ancestors become needed (a new parent dir must come along).
    void note(std::string_view path);

private:
    std::vector<std::string> only_, only_globs_;
    std::vector<std::string> exclude_;
    std::unordered_set<std::string> ancestors_;
};

// Normalise a user-given --only path: strip "./" prefixes and trailing '/'.
std::string normalize_rel(std::string_view p);

// Whether a PATH argument (as --only takes it) selects the change at
// `path`, or lies below it (a path inside a dir deleted whole is that
// deletion's). `one` is PathFilter({arg}, {}). The unmatched-PATH warnings
// of status, diff, save and apply.
bool arg_covers(const PathFilter& one, std::string_view arg, std::string_view path);

}  // namespace base
