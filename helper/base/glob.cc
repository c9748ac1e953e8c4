#include "helper/base/glob.h"

#include <algorithm>

namespace base {
namespace {

// Match a bracket class starting at p[i] == '['; sets *end past ']'.
// Returns -1 when the class is malformed (then '[' is literal).
int match_class(std::string_view p, size_t i, unsigned char c, size_t* end) {
    size_t j = i + 1;
    bool negate = false;
    if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
        negate = true;
        j++;
    }
    bool hit = false;
    bool first = true;
    while (j < p.size() && (first || p[j] != ']')) {
        first = false;
        unsigned char lo = static_cast<unsigned char>(p[j]);
        if (lo == '\\' && j + 1 < p.size()) lo = static_cast<unsigned char>(p[++j]);
        unsigned char hi = lo;
        if (j + 2 < p.size() && p[j + 1] == '-' && p[j + 2] != ']') {
            hi = static_cast<unsigned char>(p[j + 2]);
            if (hi == '\\' && j + 3 < p.size()) {
                hi = static_cast<unsigned char>(p[j + 3]);
                j++;
            }
            j += 2;
        }
        if (c >= lo && c <= hi) hit = true;
        j++;
    }
    if (j >= p.size()) return -1;
    *end = j + 1;
    return hit != negate ? 1 : 0;
}

// Match within components: '*' and '?' never match '/'; "**" components are
// handled by the caller splitting on them.
bool match_simple(std::string_view p, std::string_view s) {
    size_t pi = 0, si = 0;
    size_t star_p = std::string_view::npos, star_s = 0;
    while (si < s.size()) {
        if (pi < p.size()) {
            char pc = p[pi];
            if (pc == '*') {
                star_p = ++pi;
                star_s = si;
                continue;
            }
            if (pc == '?') {
                if (s[si] != '/') {
                    pi++;
                    si++;
                    continue;
                }
            } else if (pc == '[') {
                size_t end = 0;
                int m = match_class(p, pi, static_cast<unsigned char>(s[si]), &end);
                if (m == 1 && s[si] != '/') {
                    pi = end;
                    si++;
                    continue;
                }
                if (m < 0 && s[si] == '[') {  // malformed class: a literal '['
                    pi++;
                    si++;
                    continue;
                }
            } else {
                size_t width = 1;
                if (pc == '\\' && pi + 1 < p.size()) {
                    pc = p[pi + 1];
                    width = 2;
                }
                if (pc == s[si]) {
                    pi += width;
                    si++;
                    continue;
                }
            }
        }
        // Backtrack to the last '*', which may absorb one more byte (not '/').
        if (star_p != std::string_view::npos && s[star_s] != '/') {
            pi = star_p;
            si = ++star_s;
            continue;
        }
        return false;
    }
    while (pi < p.size() && p[pi] == '*') pi++;
    return pi == p.size();
}

std::vector<std::string_view> split(std::string_view s) {
    std::vector<std::string_view> out;
    size_t start = 0;
    for (;;) {
        size_t slash = s.find('/', start);
        if (slash == std::string_view::npos) {
            out.push_back(s.substr(start));
            return out;
        }
        out.push_back(s.substr(start, slash - start));
        start = slash + 1;
    }
}

// Does p match s component by component ("**" spans zero or more of them)?
// With `prefix`: does p match the first k components of s, for some k >= 1?
// A table over (pattern component, path component), filled one pattern row
// at a time from the end: row[si] is "p[pi..] matches from s[si]". O(P x S)
// steps and O(S) memory. (Trying every split point of every "**" in turn was
// exponential; memoizing failures left O(P x S^2) per call, and glob_selects
// called it once per ancestor: minutes for a 5,000-deep path and
// `--exclude '**/x/**/y'`. Both found by fuzzing, issue 21.)
bool match_components(const std::vector<std::string_view>& p, const std::vector<std::string_view>& s, bool prefix) {
    size_t n = s.size();
    std::vector<char> next(n + 1), row(n + 1);
    for (size_t si = 0; si <= n; si++) next[si] = prefix ? si >= 1 : si == n;
    for (size_t pi = p.size(); pi-- > 0;) {
        bool star = p[pi] == "**";
        row[n] = star && next[n];
        for (size_t si = n; si-- > 0;)
            row[si] = star ? (next[si] || row[si + 1]) : (next[si + 1] && match_simple(p[pi], s[si]));
        std::swap(row, next);
    }
    return next[0];
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view path) {
    if (pattern.find("**") == std::string_view::npos) return match_simple(pattern, path);
    return match_components(split(pattern), split(path), false);
}

bool path_is_under(std::string_view path, std::string_view prefix) {
    if (prefix.empty()) return true;
    if (path.size() < prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return false;
    return path.size() == prefix.size() || path[prefix.size()] == '/';
}

bool has_ancestor_in(std::string_view path, const std::set<std::string, std::less<>>& dirs) {
    for (size_t slash = path.rfind('/'); slash != std::string_view::npos && slash > 0;
         slash = path.rfind('/', slash - 1))
        if (dirs.count(path.substr(0, slash))) return true;
    return false;
}

std::string normalize_rel(std::string_view p) {
    while (p.size() >= 2 && p[0] == '.' && p[1] == '/') {
        p.remove_prefix(2);
        while (!p.empty() && p[0] == '/') p.remove_prefix(1);
    }
    while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
    if (p == ".") return "";
    return std::string(p);
}

bool arg_covers(const PathFilter& one, std::string_view arg, std::string_view path) {
    return one.selects(path) ||
           (arg.size() > path.size() && arg.compare(0, path.size(), path) == 0 && arg[path.size()] == '/');
}

bool has_glob_chars(std::string_view p) { return p.find_first_of("*?[") != std::string_view::npos; }

bool glob_selects(std::string_view g, std::string_view path) {
    bool anchored = g.find('/') != std::string_view::npos;
    std::string_view pat = g;
    while (anchored && pat.size() > 1 && pat.back() == '/') pat.remove_suffix(1);
    if (anchored && !pat.empty() && pat[0] == '/') pat.remove_prefix(1);
    // The path or any ancestor matching selects the whole subtree. An
    // anchored "**" pattern tries every ancestor in one pass; any other
    // anchored pattern only ancestors with no more '/' than it has (only a
    // '/' in the pattern matches one).
    if (anchored && pat.find("**") != std::string_view::npos) return match_components(split(pat), split(path), true);
    size_t slashes = static_cast<size_t>(std::count(pat.begin(), pat.end(), '/'));
    size_t end = 0;
    for (size_t depth = 0; !anchored || depth <= slashes; depth++) {
        size_t slash = path.find('/', end);
        std::string_view prefix = path.substr(0, slash);
        std::string_view last = prefix.substr(end);
        if (anchored ? match_simple(pat, prefix) : glob_match(pat, last)) return true;
        if (slash == std::string_view::npos) return false;
        end = slash + 1;
    }
    return false;
}

std::optional<std::string> escaped_literal(std::string_view p) {
    if (!p.empty() && p[0] == '/') p.remove_prefix(1);  // anchored: from the target root, as any path
    std::string out;
    out.reserve(p.size());
    for (size_t i = 0; i < p.size(); i++) {
        char c = p[i];
        if (c == '*' || c == '?' || c == '[') return std::nullopt;
        if (c == '\\' && i + 1 < p.size()) c = p[++i];
        out.push_back(c);
    }
    return out;
}

PathFilter::PathFilter(std::vector<std::string> only, std::vector<std::string> exclude) : exclude_(std::move(exclude)) {
    for (auto& o : only) {
        std::string n = normalize_rel(o);
        if (!has_glob_chars(n)) only_.push_back(std::move(n));
        else if (auto lit = escaped_literal(n)) only_.push_back(std::move(*lit));
        else only_globs_.push_back(std::move(n));
    }
}

bool PathFilter::excluded(std::string_view path) const {
    for (const auto& g : exclude_)
        if (glob_selects(g, path)) return true;
    return false;
}

bool PathFilter::selects(std::string_view path) const {
    if (excluded(path)) return false;
    if (only_.empty() && only_globs_.empty()) return true;
    for (const auto& o : only_)
        if (path_is_under(path, o)) return true;
    // A glob naming a file whose name holds '[' or '*' literally also selects it.
    for (const auto& g : only_globs_)
        if (path_is_under(path, g) || glob_selects(g, path)) return true;
    return false;
}

void PathFilter::note(std::string_view path) {
    if (only_globs_.empty() || !selects(path)) return;
    for (size_t slash = path.rfind('/'); slash != std::string_view::npos && slash > 0;
         slash = path.rfind('/', slash - 1)) {
        if (!ancestors_.emplace(path.substr(0, slash)).second) break;
    }
}

bool PathFilter::selects_strictly_beneath(std::string_view path) const {
    for (const auto& o : only_)
        if (o.size() > path.size() && path_is_under(o, path)) return true;
    return !ancestors_.empty() && ancestors_.count(std::string(path)) > 0;
}

bool PathFilter::needed(std::string_view path) const {
    if (excluded(path)) return false;
    return selects(path) || selects_strictly_beneath(path);
}

}  // namespace base
