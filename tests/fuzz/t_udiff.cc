// The unified-diff writer: random old/new texts (split at the first NUL)
// are rendered as `layover diff` does, and the hunks, applied to old, must
// give back new exactly (tests/integration/test_fuzz_udiff.py applies the
// committed corpus with `git apply` too).
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "review/diff/algo.h"
#include "review/diff/format.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

namespace {

// "@@ -A[,B] +C[,D] @@": the old start and count.
bool hunk_header(std::string_view l, size_t* start, size_t* count) {
    if (l.substr(0, 4) != "@@ -") return false;
    const char* p = l.data() + 4;
    char* end = nullptr;
    *start = std::strtoul(p, &end, 10);
    *count = 1;
    if (*end == ',') *count = std::strtoul(end + 1, &end, 10);
    return true;
}

// Applies the hunks of a rendered diff to old; false when they do not fit.
bool apply_unified(const std::string& diff, std::string_view old, std::string* out) {
    auto a = review::split_lines(old);
    auto d = review::split_lines(diff);
    size_t ai = 0, i = 0;
    while (i < d.size() && d[i].substr(0, 3) != "@@ ") i++;
    std::string res;
    while (i < d.size()) {
        size_t start, count;
        if (!hunk_header(d[i], &start, &count)) return false;
        size_t from = count == 0 ? start : start - 1;
        if (from < ai || from > a.size()) return false;
        for (; ai < from; ai++) res.append(a[ai]);
        std::vector<std::pair<char, std::string>> lines;
        for (i++; i < d.size() && d[i].substr(0, 3) != "@@ "; i++) {
            std::string_view l = d[i];
            if (l.empty()) return false;
            if (l[0] == '\\') {
                if (lines.empty() || lines.back().second.empty() || lines.back().second.back() != '\n') return false;
                lines.back().second.pop_back();
                continue;
            }
            lines.emplace_back(l[0], std::string(l.substr(1)));
        }
        for (auto& [op, text] : lines) {
            if (op == ' ' || op == '-') {
                if (ai >= a.size() || a[ai] != text) return false;
                if (op == ' ') res += text;
                ai++;
            } else if (op == '+') {
                res += text;
            } else {
                return false;
            }
        }
    }
    for (; ai < a.size(); ai++) res.append(a[ai]);
    *out = std::move(res);
    return true;
}

}  // namespace

int udiff(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto nul = in.find('\0');
    if (nul == std::string_view::npos) return 0;
    std::string_view old = in.substr(0, nul), now = in.substr(nul + 1);
    review::FileDiff f;
    f.path = "f.txt";
    f.old_side = {true, review::kGitRegular, std::string(old), true, old.size()};
    f.new_side = {true, review::kGitRegular, std::string(now), true, now.size()};
    review::Style style;
    review::FileStat st;
    std::string text = review::render_file(f, style, &st);
    if (old == now) {
        if (!text.empty()) __builtin_trap();
        return 0;
    }
    if (review::looks_binary(old) || review::looks_binary(now)) return 0;
    std::string back;
    if (!apply_unified(text, old, &back) || back != now) __builtin_trap();
    // The terminal form never emits a raw control byte but tab and newline.
    style.escape = true;
    for (unsigned char c : review::render_file(f, style))
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) __builtin_trap();
    return 0;
}

}  // namespace fuzz
