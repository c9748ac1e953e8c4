#include "helper/base/suggest.h"

#include <algorithm>
#include <vector>

namespace base {

namespace {

bool flag_char(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }

// The VERB of a "layover VERB " that ends text[0, at), or "".
std::string_view verb_before(std::string_view text, size_t at) {
    if (at < 2 || text[at - 1] != ' ') return {};
    size_t s = at - 1;
    while (s > 0 && flag_char(text[s - 1])) s--;
    constexpr std::string_view kLayover = "layover ";
    if (s == at - 1 || s < kLayover.size() || text.substr(s - kLayover.size(), kLayover.size()) != kLayover) return {};
    return text.substr(s, at - 1 - s);
}

// Every --word of the text, once, in order; not those of another verb its
// prose names ('layover diff --hunk-numbers' in apply's help).
std::vector<std::string_view> long_flags(std::string_view text) {
    std::vector<std::string_view> out;
    size_t usage = text.find("usage: layover ");
    std::string_view self =
        usage == std::string_view::npos ? std::string_view() : verb_before(text, text.find(' ', usage + 15) + 1);
    for (size_t i = 0; i + 2 < text.size(); i++) {
        if (text[i] != '-' || text[i + 1] != '-' || (i > 0 && flag_char(text[i - 1]))) continue;
        std::string_view verb = verb_before(text, i);
        if (!verb.empty() && verb != self) continue;
        size_t j = i + 2;
        while (j < text.size() && flag_char(text[j])) j++;
        if (j > i + 3 && text[i + 2] != '-') {
            std::string_view f = text.substr(i, j - i);
            if (std::find(out.begin(), out.end(), f) == out.end()) out.push_back(f);
        }
        i = j;
    }
    return out;
}

// Edits from a to b: insert, delete, change, swap of two neighbours (optimal string alignment).
size_t distance(std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); i++) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); j++) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); i++)
        for (size_t j = 1; j <= b.size(); j++) {
            size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
    return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_flag(std::string_view arg, std::string_view usage) {
    arg = arg.substr(0, arg.find('='));
    if (arg.size() > 64 || arg.size() < 2 || arg[0] != '-') return "";
    size_t dashes = arg.find_first_not_of('-');
    if (dashes == std::string_view::npos) return "";
    std::string_view word = arg.substr(dashes);
    std::string as_long = "--" + std::string(word);
    std::string_view best;
    size_t best_d = 3, begins = 0;
    std::string_view begun;
    for (std::string_view f : long_flags(usage)) {
        if (f == arg) return "";
        size_t limit = f.size() - 2 <= 4 ? 1 : 2;
        size_t d = distance(as_long, f);
        if (d <= limit && d < best_d) {
            best = f;
            best_d = d;
        }
        if (word.size() >= 3 && f.substr(0, as_long.size()) == as_long) {
            begins++;
            begun = f;
        }
    }
    if (!best.empty()) return std::string(best);
    return begins == 1 ? std::string(begun) : "";
}

std::string nearest_name(std::string_view arg, const std::vector<std::string>& names) {
    if (arg.empty() || arg.size() > 64) return "";
    std::string_view best, begun;
    size_t best_d = 3, ties = 0, begins = 0;
    for (const std::string& n : names) {
        if (n == arg) return "";
        size_t limit = n.size() <= 4 ? 1 : 2;
        size_t d = distance(arg, n);
        if (d <= limit && d < best_d) {
            best = n;
            best_d = d;
            ties = 1;
        } else if (d <= limit && d == best_d) {
            ties++;
        }
        if (arg.size() >= 3 && n.size() > arg.size() && n.compare(0, arg.size(), arg) == 0) {
            begins++;
            begun = n;
        }
    }
    if (!best.empty()) return ties == 1 ? std::string(best) : "";
    return begins == 1 ? std::string(begun) : "";
}

std::string did_you_mean(std::string_view arg, std::string_view usage) {
    std::string f = nearest_flag(arg, usage);
    return f.empty() ? "" : " (did you mean '" + f + "'?)";
}

}  // namespace base
