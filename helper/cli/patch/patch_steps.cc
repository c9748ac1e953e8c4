#include "helper/cli/patch/patch_steps.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "helper/base/json/bytes.h"
#include "helper/base/text.h"

namespace {

struct Counts {
    int added = 0, modified = 0, deleted = 0;
};

Counts count(const steps::Record& r) {
    Counts c;
    for (const auto& t : r.paths) {
        if (t.kind == "A") c.added++;
        else if (t.kind == "D") c.deleted++;
        else c.modified++;
    }
    return c;
}

}  // namespace

int print_patch_steps(const capture::Patch& p, bool json) {
    const auto& m = p.manifest();
    const auto& recs = m.steps;
    if (json) {
        nlohmann::json arr = nlohmann::json::array();
        for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
            nlohmann::json paths = nlohmann::json::array();
            for (const auto& t : it->paths) {
                nlohmann::json o = base::json::path_object(t.path);
                o["kind"] = t.kind;
                paths.push_back(std::move(o));
            }
            Counts c = count(*it);
            arr.push_back({{"step", it->live ? nlohmann::json(nullptr) : nlohmann::json(it->n)},
                           {"live", it->live},
                           {"squashed", it->squashed},
                           {"label", it->label},
                           {"start", it->start},
                           {"end", it->end},
                           {"added", c.added},
                           {"modified", c.modified},
                           {"deleted", c.deleted},
                           {"paths", std::move(paths)}});
        }
        nlohmann::json top = {{"patch", p.file()}, {"session", m.session}, {"steps", std::move(arr)}};
        std::puts(top.dump(2, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
        return 0;
    }
    size_t frozen = recs.size() - (!recs.empty() && recs.back().live ? 1 : 0);
    if (recs.empty()) {
        std::printf("patch %s: no step records (the session had no steps, or an older layover saved it)\n",
                    base::display_path(p.file()).c_str());
        return 0;
    }
    std::printf("patch %s (session '%s'): %zu step%s%s\n", base::display_path(p.file()).c_str(),
                base::display_path(m.session).c_str(), frozen, frozen == 1 ? "" : "s",
                frozen == recs.size() ? "" : " and live changes");
    for (auto it = recs.rbegin(); it != recs.rend(); ++it) {
        std::string num = it->live ? "(live)" : std::to_string(it->n);
        const std::string& when = it->live ? it->start : it->end;
        Counts c = count(*it);
        std::string counts =
            "+" + std::to_string(c.added) + " ~" + std::to_string(c.modified) + " -" + std::to_string(c.deleted);
        std::printf("%6s  %-20s  %-14s %-9s %s\n", num.c_str(), when.empty() ? "-" : base::display_path(when).c_str(),
                    counts.c_str(), it->squashed ? "squashed" : "", base::display_path(it->label).c_str());
    }
    return 0;
}
