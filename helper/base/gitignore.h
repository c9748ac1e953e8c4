// Ignore rules in .gitignore syntax (pure): the built-in cache list, the
// target's .layoverignore and --ignore GLOB, matched against paths relative
// to the target root.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace base {

class IgnoreRules {
public:
    // One line: blank lines and `#` comments are skipped; trailing spaces are
    // cut unless escaped (`\ `); `!` negates (`\!` and `\#` are literal); a
    // trailing `/` matches directories only; a `/` at the start or in the
    // middle anchors the pattern at the root, otherwise it matches a name at
    // any depth; `*`, `?`, `[..]` and `**` as base::glob_match.
    void add_line(std::string_view line);
    // Every line of a file's text.
    void add_text(std::string_view text);
    bool empty() const { return rules_.empty(); }
    size_t size() const { return rules_.size(); }

    // The verdict for `path` alone, its parent dirs taken as not ignored:
    // the last rule that matches wins (a negation re-includes).
    bool match(std::string_view path, bool is_dir) const;
    // The full verdict, as git has it: beneath an ignored directory every
    // path is ignored, and no negation can re-include it.
    bool ignored(std::string_view path, bool is_dir) const;

private:
    struct Rule {
        std::string pattern;
        bool negate = false, dir_only = false, anchored = false;
        bool inside_only = false;  // "dir/**": what lies inside, not dir itself
        // A name pattern (not anchored) of one of these shapes, with no other
        // '*', '?', '[' or '\\': compared without the glob matcher (each
        // changed file meets every rule: docs/performance.md, "Status, fifth pass").
        enum class Shape : unsigned char { Glob, Exact, StarThen, ThenStar } shape = Shape::Glob;  // NAME, *NAME, NAME*
        size_t from = 0, len = 0;  // NAME in pattern (offsets: a Rule is moved)
    };
    bool matches(const Rule& r, std::string_view path, std::string_view name, bool is_dir) const;
    static void shape(Rule* r);
    std::vector<Rule> rules_;
};

}  // namespace base
