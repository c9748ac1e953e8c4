#include "review/diff/merge3.h"

#include <algorithm>

#include "helper/base/text.h"
#include "review/diff/algo.h"

namespace review {

namespace {

struct Edit {
    size_t a0, a1, b0, b1;
    int side;  // 0 ours, 1 theirs
};

void append(std::string& out, const std::vector<std::string_view>& lines, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) out.append(lines[i]);
}

// A conflict section's lines end with a newline so the marker after them stands on its own line.
void append_section(std::string& out, const std::vector<std::string_view>& lines, size_t from, size_t to) {
    append(out, lines, from, to);
    if (to > from && !out.empty() && out.back() != '\n') out.push_back('\n');
}

bool same_lines(const std::vector<std::string_view>& x, size_t x0, size_t x1, const std::vector<std::string_view>& y,
                size_t y0, size_t y1) {
    if (x1 - x0 != y1 - y0) return false;
    for (size_t i = 0; i < x1 - x0; i++)
        if (x[x0 + i] != y[y0 + i]) return false;
    return true;
}

}  // namespace

std::string range_text(const LineRange& r) {
    if (r.count <= 1) return std::to_string(r.first);
    return std::to_string(r.first) + "-" + std::to_string(r.first + r.count - 1);
}

MergeResult merge3(std::string_view base, std::string_view ours, std::string_view theirs, bool markers,
                   const MergeLabels& labels) {
    auto b = split_lines(base);
    std::vector<std::string_view> side[2] = {split_lines(ours), split_lines(theirs)};
    std::vector<Edit> edits;
    for (int s = 0; s < 2; s++)
        for (const Group& g : groups_of(diff_lines(b, side[s]))) edits.push_back({g.a0, g.a1, g.b0, g.b1, s});
    std::stable_sort(edits.begin(), edits.end(),
                     [](const Edit& x, const Edit& y) { return x.a0 != y.a0 ? x.a0 < y.a0 : x.a1 < y.a1; });

    MergeResult out;
    long long off[2] = {0, 0};  // side line - base line, before the current chunk
    size_t pos = 0;             // next base line to copy
    for (size_t i = 0; i < edits.size();) {
        // A chunk: edits whose base ranges overlap or touch.
        size_t A0 = edits[i].a0, A1 = edits[i].a1, j = i + 1;
        bool has[2] = {false, false};
        long long delta[2] = {0, 0};
        has[edits[i].side] = true;
        delta[edits[i].side] +=
            static_cast<long long>(edits[i].b1 - edits[i].b0) - static_cast<long long>(edits[i].a1 - edits[i].a0);
        while (j < edits.size() && edits[j].a0 <= A1) {
            A1 = std::max(A1, edits[j].a1);
            has[edits[j].side] = true;
            delta[edits[j].side] +=
                static_cast<long long>(edits[j].b1 - edits[j].b0) - static_cast<long long>(edits[j].a1 - edits[j].a0);
            j++;
        }
        append(out.text, b, pos, A0);
        size_t s0[2], s1[2];
        for (int s = 0; s < 2; s++) {
            s0[s] = static_cast<size_t>(static_cast<long long>(A0) + off[s]);
            s1[s] = static_cast<size_t>(static_cast<long long>(A1) + off[s] + delta[s]);
        }
        if (!has[1]) {
            append(out.text, side[0], s0[0], s1[0]);
        } else if (!has[0] || same_lines(side[0], s0[0], s1[0], side[1], s0[1], s1[1])) {
            append(out.text, side[1], s0[1], s1[1]);
        } else {
            out.conflicts.push_back({{A0 + 1, A1 - A0}, {s0[0] + 1, s1[0] - s0[0]}, {s0[1] + 1, s1[1] - s0[1]}});
            if (markers) {
                if (!out.text.empty() && out.text.back() != '\n') out.text.push_back('\n');
                out.text += "<<<<<<< " + labels.ours + "\n";
                append_section(out.text, side[0], s0[0], s1[0]);
                out.text += "=======\n";
                append_section(out.text, side[1], s0[1], s1[1]);
                out.text += ">>>>>>> " + labels.theirs + "\n";
            } else {
                append(out.text, side[0], s0[0], s1[0]);
            }
        }
        for (int s = 0; s < 2; s++) off[s] += delta[s];
        pos = A1;
        i = j;
    }
    append(out.text, b, pos, b.size());
    return out;
}

std::string over_merge_budget(const std::string& path) {
    return "not merged: with the files merged before it its merge would pass the " +
           std::to_string(kMaxMergeTotal >> 20) + " MiB that merges may hold together (both sides of each file); " +
           "apply it on its own to merge it (--only " + base::display_path(path) + ")";
}

}  // namespace review
