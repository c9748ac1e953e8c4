#include "review/diff/hunks.h"

#include <algorithm>

#include "helper/base/text.h"

namespace review {

std::vector<HunkSpan> hunk_spans(const std::vector<Group>& groups, size_t a_lines, int context) {
    std::vector<HunkSpan> out;
    const size_t ctx = static_cast<size_t>(context < 0 ? 0 : context);
    for (size_t gi = 0; gi < groups.size();) {
        size_t gj = gi;
        while (gj + 1 < groups.size() && groups[gj + 1].a0 - groups[gj].a1 <= 2 * ctx) gj++;
        size_t lead = std::min(ctx, groups[gi].a0);  // a0 - b0 offsets are equal before a group
        size_t trail = std::min(ctx, a_lines - groups[gj].a1);
        out.push_back(
            {gi, gj, groups[gi].a0 - lead, groups[gj].a1 + trail, groups[gi].b0 - lead, groups[gj].b1 + trail});
        gi = gj + 1;
    }
    return out;
}

size_t count_hunks(std::string_view old_text, std::string_view new_text, int context) {
    auto a = split_lines(old_text), b = split_lines(new_text);
    return hunk_spans(groups_of(diff_lines(a, b)), a.size(), context).size();
}

std::string apply_hunks(std::string_view old_text, std::string_view new_text, const std::vector<bool>& take,
                        int context) {
    auto a = split_lines(old_text), b = split_lines(new_text);
    auto groups = groups_of(diff_lines(a, b));
    auto spans = hunk_spans(groups, a.size(), context);
    std::string out;
    out.reserve(std::max(old_text.size(), new_text.size()));
    size_t i = 0;  // next old line to copy
    for (size_t h = 0; h < spans.size(); h++) {
        if (h >= take.size() || !take[h]) continue;
        for (size_t g = spans[h].g0; g <= spans[h].g1; g++) {
            const Group& gr = groups[g];
            for (; i < gr.a0; i++) out.append(a[i]);
            for (size_t j = gr.b0; j < gr.b1; j++) out.append(b[j]);
            i = gr.a1;
        }
    }
    for (; i < a.size(); i++) out.append(a[i]);
    return out;
}

base::Result<HunkPick> parse_hunk_pick(const std::string& arg) {
    auto fix = "; give PATH:N[,M...] with N the hunk's number in 'layover diff --hunk-numbers'";
    size_t colon = arg.rfind(':');
    if (colon == std::string::npos || colon == 0)
        return base::error("'" + base::display_path(arg) + "' names no hunk" + fix);
    HunkPick p;
    p.path = arg.substr(0, colon);
    std::string nums = arg.substr(colon + 1);
    size_t pos = 0;
    while (true) {
        size_t comma = nums.find(',', pos);
        std::string n = nums.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
        if (n.empty() || n.size() > 9 || n.find_first_not_of("0123456789") != std::string::npos || std::stoul(n) == 0)
            return base::error("'" + base::display_path(arg) + "': '" + base::display_path(n) +
                               "' is not a hunk number (1, 2, ...)" + fix);
        p.numbers.push_back(std::stoul(n));
        if (comma == std::string::npos) break;
        pos = comma + 1;
    }
    return p;
}

base::Result<std::vector<bool>> choose_hunks(const std::string& path, const HunkChoice& c, size_t count) {
    for (const auto* list : {&c.take, &c.leave})
        for (size_t n : *list)
            if (n < 1 || n > count)
                return base::error(base::display_path(path) + " has " + std::to_string(count) + " hunk" +
                                   (count == 1 ? "" : "s") + ", no hunk " + std::to_string(n) +
                                   "; see 'layover diff --hunk-numbers'; nothing was applied");
    std::vector<bool> take(count, c.take.empty());
    for (size_t n : c.take) take[n - 1] = true;
    for (size_t n : c.leave) take[n - 1] = false;
    return take;
}

}  // namespace review
