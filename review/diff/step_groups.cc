#include "review/diff/step_groups.h"

#include <map>

#include "helper/base/text.h"

namespace review {

namespace {

std::string header_of(const steps::Record& r) {
    std::string h = r.live ? "# live changes (not yet a step)" : "# step " + std::to_string(r.n);
    if (r.squashed) h += " (squashed)";
    if (!r.label.empty()) h += ": " + base::display_path(r.label);
    return h + "\n";
}

}  // namespace

std::vector<StepGroup> group_by_step(const std::vector<steps::Record>& records, const std::vector<std::string>& paths) {
    if (records.size() < 2) return {};
    std::map<std::string, size_t> last;  // path -> index of the last record touching it
    for (size_t i = 0; i < records.size(); i++)
        for (const auto& t : records[i].paths) last[t.path] = i;
    constexpr size_t kNone = static_cast<size_t>(-1);
    std::vector<std::vector<size_t>> by_record(records.size());
    std::vector<size_t> unknown;
    for (size_t f = 0; f < paths.size(); f++) {
        // The path itself, else the nearest dir above it that a step touched.
        size_t at = kNone;
        std::string p = paths[f];
        for (;;) {
            auto it = last.find(p);
            if (it != last.end()) {
                at = it->second;
                break;
            }
            auto slash = p.rfind('/');
            if (slash == std::string::npos) break;
            p.resize(slash);
        }
        (at == kNone ? unknown : by_record[at]).push_back(f);
    }
    std::vector<StepGroup> out;
    for (size_t i = 0; i < records.size(); i++)
        if (!by_record[i].empty()) out.push_back({header_of(records[i]), std::move(by_record[i])});
    if (!unknown.empty()) out.push_back({"# (no step record names these)\n", std::move(unknown)});
    return out;
}

}  // namespace review
