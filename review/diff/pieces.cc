#include "review/diff/pieces.h"

#include <algorithm>

namespace review {

namespace {

std::string range(size_t start, size_t count) {
    std::string r = std::to_string(count == 0 ? start : start + 1);  // as git: the line before when empty
    if (count != 1) r += "," + std::to_string(count);
    return r;
}

void line(std::string& out, char sign, std::string_view l) {
    out.push_back(sign);
    out.append(l);
    if (l.empty() || l.back() != '\n') out += "\n\\ No newline at end of file\n";
}

std::string join(const std::vector<std::string_view>& v, size_t from, size_t to) {
    std::string s;
    for (size_t i = from; i < to; i++) s.append(v[i]);
    return s;
}

struct Replace {
    size_t a0, a1;
    std::string text;
};

}  // namespace

void diff_file(FileHunks& f, std::string old_text, std::string new_text) {
    f.old_text = std::move(old_text);
    f.new_text = std::move(new_text);
    f.a = split_lines(f.old_text);
    f.b = split_lines(f.new_text);
    f.d = diff_lines(f.a, f.b);
    f.groups = groups_of(f.d);
    f.spans = hunk_spans(f.groups, f.a.size(), kHunkContext);
}

std::vector<Piece> hunk_pieces(const FileHunks& f) {
    std::vector<Piece> out;
    out.reserve(f.spans.size());
    for (size_t h = 0; h < f.spans.size(); h++) {
        const HunkSpan& s = f.spans[h];
        out.push_back({h, s.g0, s.g1, s.a_start, s.a_end, s.b_start, s.b_end, false, std::nullopt});
    }
    return out;
}

std::vector<Piece> split_piece(const FileHunks& f, const Piece& p) {
    if (p.g0 == p.g1 || p.edited) return {p};
    std::vector<Piece> out;
    const size_t ctx = kHunkContext;
    for (size_t g = p.g0; g <= p.g1; g++) {
        const Group& gr = f.groups[g];
        size_t before = g == p.g0 ? gr.a0 - p.a0 : gr.a0 - f.groups[g - 1].a1;
        size_t after = g == p.g1 ? p.a1 - gr.a1 : f.groups[g + 1].a0 - gr.a1;
        size_t lead = std::min(ctx, before), trail = std::min(ctx, after);
        out.push_back({p.hunk, g, g, gr.a0 - lead, gr.a1 + trail, gr.b0 - lead, gr.b1 + trail, true, std::nullopt});
    }
    return out;
}

std::string render_piece(const FileHunks& f, const Piece& p) {
    std::string out = "@@ -" + range(p.a0, p.a1 - p.a0) + " +" + range(p.b0, p.b1 - p.b0) + " @@\n";
    size_t i = p.a0, j = p.b0;
    while (i < p.a1 || j < p.b1) {
        if (i < p.a1 && f.d.del[i]) line(out, '-', f.a[i++]);
        else if (j < p.b1 && f.d.ins[j]) line(out, '+', f.b[j++]);
        else if (i < p.a1 && j < p.b1) line(out, ' ', f.a[i++]), j++;
        else break;  // cannot happen for a piece of the diff; never loop
    }
    return out;
}

base::Result<std::string> parse_edited(const FileHunks& f, const Piece& p, std::string_view edited) {
    std::string old_side, new_side;
    char last = 0;  // the previous line's sign
    size_t n = 0;
    for (size_t pos = 0; pos < edited.size();) {
        size_t nl = edited.find('\n', pos);
        std::string_view l = edited.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
        pos = nl == std::string_view::npos ? edited.size() : nl + 1;
        n++;
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        if ((!l.empty() && l[0] == '#') || l.substr(0, 3) == "@@ ") continue;  // comments, the hunk's header
        if (!l.empty() && l[0] == '\\') {
            // "\ No newline at end of file": the line before has none.
            if (last != '+' && !old_side.empty() && old_side.back() == '\n') old_side.pop_back();
            if (last != '-' && !new_side.empty() && new_side.back() == '\n') new_side.pop_back();
            continue;
        }
        char sign = l.empty() ? ' ' : l[0];
        if (sign != ' ' && sign != '-' && sign != '+')
            return base::error("line " + std::to_string(n) +
                               " of the edited hunk starts with neither ' ', '-' nor '+' (or '#' for a comment)");
        std::string body = std::string(l.empty() ? l : l.substr(1)) + "\n";
        if (sign != '+') old_side += body;
        if (sign != '-') new_side += body;
        last = sign;
    }
    if (old_side != join(f.a, p.a0, p.a1))
        return base::error("the edited hunk no longer applies: its ' ' and '-' lines must stay lines " +
                           range(p.a0, p.a1 - p.a0) +
                           " of the file as they are (change '+' lines, delete a '+' line, or turn a '-' into "
                           "' ' to keep that line)");
    return new_side;
}

base::Result<std::string> apply_pieces(const FileHunks& f, const std::vector<Piece>& pieces,
                                       const std::vector<char>& take) {
    std::vector<Replace> reps;
    for (size_t k = 0; k < pieces.size() && k < take.size(); k++) {
        if (!take[k]) continue;
        const Piece& p = pieces[k];
        if (!p.edited) {
            for (size_t g = p.g0; g <= p.g1 && g < f.groups.size(); g++) {
                const Group& gr = f.groups[g];
                reps.push_back({gr.a0, gr.a1, join(f.b, gr.b0, gr.b1)});
            }
            continue;
        }
        // Only the lines the edit changed: equal leading and trailing lines are context.
        auto e = split_lines(*p.edited);
        size_t a0 = p.a0, a1 = p.a1, e0 = 0, e1 = e.size();
        while (a0 < a1 && e0 < e1 && f.a[a0] == e[e0]) a0++, e0++;
        while (a0 < a1 && e0 < e1 && f.a[a1 - 1] == e[e1 - 1]) a1--, e1--;
        if (a0 == a1 && e0 == e1) continue;  // edited back to no change
        reps.push_back({a0, a1, join(e, e0, e1)});
    }
    std::stable_sort(reps.begin(), reps.end(), [](const Replace& x, const Replace& y) { return x.a0 < y.a0; });
    for (size_t k = 1; k < reps.size(); k++)
        if (reps[k].a0 < reps[k - 1].a1 || reps[k].a0 == reps[k - 1].a0)
            return base::error("an edited hunk changes lines another hunk taken changes too (near line " +
                               std::to_string(reps[k].a0 + 1) + "); edit one hunk to hold both");
    std::string out;
    out.reserve(f.old_text.size() + f.new_text.size() / 4);
    size_t i = 0;
    for (const auto& r : reps) {
        for (; i < r.a0; i++) out.append(f.a[i]);
        out += r.text;
        i = r.a1;
    }
    for (; i < f.a.size(); i++) out.append(f.a[i]);
    return out;
}

}  // namespace review
