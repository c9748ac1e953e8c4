#include "review/prompt/text.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include "capture/scan/entry/ignore.h"
#include "capture/scan/entry/summary.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "review/prompt/hunk_walk.h"
#include "review/prompt/listing.h"

namespace review {

// Two lines: each fits an 80-column terminal (one line took 107 columns).
const char kMenu[] =
    "  [r] review diff    [a] apply    [s] save patch    [p] pick files\n"
    "  [k] keep session (default)    [d] discard\n";

// What `?` prints: one line a letter, each fitting an 80-column terminal.
const char kMenuHelp[] =
    "  r  review: the diff of the changes (or of those picked), paged; then the menu\n"
    "  a  apply: asks, then writes them to the real tree ('layover undo' undoes it)\n"
    "  s  save: writes them to a patch file, for a reviewer; the session stays\n"
    "  p  pick: the files that a, s and r then use ('hunks': the hunks a applies)\n"
    "  k  keep (also Enter, Ctrl+C, Ctrl+D): 'layover apply NAME' or 'diff' later\n"
    "  d  discard: asks, then moves the session to the trash for 24 hours\n";

const char kPickHelp[] =
    "  Paths, directories and globs pick what they name (src/ '*.py');\n"
    "  -X leaves X out, +X adds it; numbers and ranges (2-4) toggle; all, none;\n"
    "  list; hunks asks hunk by hunk in what is picked.\n";

std::string menu_choice(const std::string& answer) {
    static const struct {
        const char* word;
        const char* letter;
    } kWords[] = {{"review", "r"}, {"diff", "r"}, {"apply", "a"},   {"save", "s"}, {"pick", "p"},
                  {"keep", "k"},   {"", "k"},     {"discard", "d"}, {"h", "?"},    {"help", "?"}};
    for (const auto& w : kWords)
        if (answer == w.word) return w.letter;
    return answer;
}

namespace {

// The line `status` prints (a link's target, a mode change, a socket not
// captured), so the prompt shows what a person applies: before newuser12's
// pass a new link's target and a mode change with no mark were left out.
std::string line_of(const capture::Change& c) { return "  " + capture::summary_line(c); }

bool parse_num(const std::string& s, size_t* out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = static_cast<size_t>(std::strtoul(s.c_str(), nullptr, 10));
    return true;
}

}  // namespace

std::string summary_text(const std::vector<capture::Change>& changes, const RiskContext& ctx, bool color,
                         size_t* risky_count, uint64_t ignored) {
    std::string out;
    size_t risky = 0, lines = 0;
    size_t fold_end = 0;
    for (size_t i = 0; i < changes.size(); i++) {
        const auto& c = changes[i];
        auto why = risks_of(c, ctx);
        std::string line = line_of(c);
        // A new dir takes one line; what lies below it is counted there,
        // except a risky entry, which is always shown on its own.
        if (i >= fold_end) {
            capture::Fold f = capture::fold_at(changes, i);
            if (f.end > i + 1) {
                fold_end = f.end;
                line += "  (" + capture::fold_note(f) + ")";
            }
        } else if (why.empty()) {
            continue;
        }
        if (!why.empty()) {
            risky++;
            line += marks_text(why);
            if (color) line = "\033[1;31m" + line + "\033[m";
        }
        out += line + "\n";
        lines++;
    }
    if (ignored) out += capture::ignored_line(ignored) + "\n";
    // The total as `status` words it (only the kinds there are).
    std::string total = capture::total_line(changes, lines);
    if (risky) total += "; " + std::to_string(risky) + " marked ! need a careful look";
    out += total + "\n";
    if (risky_count) *risky_count = risky;
    return out;
}

std::string pick_list(const std::vector<capture::Change>& changes, const std::vector<char>& selected) {
    std::string out;
    size_t width = std::to_string(changes.size()).size();  // numbers right-aligned: the paths line up
    for (size_t i = 0; i < changes.size(); i++) {
        std::string n = std::to_string(i + 1);
        out += selected[i] ? "  [x] " : "  [ ] ";
        out += std::string(width - n.size(), ' ') + n + line_of(changes[i]) + "\n";
    }
    return out;
}

namespace {

// Numbers and ranges ("3", "2-5"), 1-based: false when t is not one.
bool parse_range(const std::string& t, size_t n, size_t* lo, size_t* hi, std::string* error) {
    size_t dash = t.find('-', 1);
    bool ok = dash == std::string::npos ? parse_num(t, lo) && (*hi = *lo, true)
                                        : parse_num(t.substr(0, dash), lo) && parse_num(t.substr(dash + 1), hi);
    if (!ok) return false;
    if (*lo < 1 || *hi < *lo || *hi > n) {
        *error = "'" + t + "' is not a number or range within 1-" + std::to_string(n);
        return false;
    }
    return true;
}

bool is_numeric(const std::string& t) { return !t.empty() && t.find_first_not_of("0123456789-") == std::string::npos; }

}  // namespace

bool apply_picks(const std::string& answer, const std::vector<capture::Change>& changes, std::vector<char>& selected,
                 std::string* error) {
    error->clear();
    std::vector<char> next = selected;
    std::istringstream in(answer);
    std::string tok;
    const size_t n = next.size();
    bool first = true;
    while (in >> tok) {
        for (auto& ch : tok)
            if (ch == ',') ch = ' ';
        std::istringstream parts(tok);
        std::string t;
        while (parts >> t) {
            bool at_start = first;
            first = false;
            if (t == "all") {
                next.assign(n, 1);
                continue;
            }
            if (t == "none") {
                next.assign(n, 0);
                continue;
            }
            size_t lo = 0, hi = 0;
            if (is_numeric(t) && t[0] != '-') {
                if (!parse_range(t, n, &lo, &hi, error)) {
                    if (error->empty()) *error = "'" + t + "' is not a number or range within 1-" + std::to_string(n);
                    return false;
                }
                for (size_t k = lo; k <= hi; k++) next[k - 1] = !next[k - 1];
                continue;
            }
            // A path, directory or glob: "-X" deselects, "+X" adds, a bare X
            // first in the answer picks just what it names.
            char sign = t[0] == '-' || t[0] == '+' ? t[0] : 0;
            std::string what = sign ? t.substr(1) : t;
            if (what.empty()) {
                *error = "'" + t + "' names nothing; give a path, directory or glob after it";
                return false;
            }
            std::vector<size_t> hits;
            if (is_numeric(what) && parse_range(what, n, &lo, &hi, error)) {
                for (size_t k = lo; k <= hi; k++) hits.push_back(k - 1);
            } else {
                if (!error->empty()) return false;
                base::PathFilter f({what}, {});
                for (size_t i = 0; i < changes.size() && i < n; i++)
                    if (f.selects(changes[i].path)) hits.push_back(i);
            }
            if (hits.empty()) {
                *error = "'" + base::display_path(what) + "' matches no change (paths are relative to the target)";
                return false;
            }
            if (!sign && at_start) next.assign(n, 0);
            for (size_t i : hits) next[i] = sign == '-' ? 0 : 1;
        }
    }
    selected = next;
    return true;
}

PickScope pick_scope(const std::vector<capture::Change>& changes, const std::vector<char>& selected) {
    PickScope out;
    size_t n = std::min(changes.size(), selected.size());
    if (std::count(selected.begin(), selected.begin() + n, 0) == 0) return out;
    std::set<std::string, std::less<>> picked;
    for (size_t i = 0; i < n; i++)
        if (selected[i]) {
            picked.insert(changes[i].path);
            out.only.push_back(only_entry(changes[i].path));
        }
    for (size_t i = 0; i < n; i++) {
        if (selected[i]) continue;
        const std::string& p = changes[i].path;
        std::string dir = p + "/";
        auto below = picked.lower_bound(dir);
        if (below != picked.end() && below->compare(0, dir.size(), dir) == 0) continue;  // needed
        if (base::has_ancestor_in(p, picked)) out.exclude.push_back(exclude_entry(p));
    }
    return out;
}

std::string picked_line(const std::vector<char>& selected) {
    size_t k = 0;
    for (char c : selected) k += c ? 1 : 0;
    return base::thousands(k) + " of " + base::thousands(selected.size()) +
           (selected.size() == 1 ? " change picked" : " changes picked");
}

}  // namespace review
