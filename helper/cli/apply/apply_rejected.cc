#include "helper/cli/apply/apply_rejected.h"

#include <cstdio>

#include "helper/store/session/session.h"
#include "review/prompt/rejected_patch.h"

base::Result<void> skip_rejected(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts) {
    if (!patch.from_session()) return base::Ok();
    TRY(std::string state, session::state_dir());
    TRY(session::Info info, session::find(state, patch.manifest().session));
    TRY(auto states, review::patch_rejections(patch, info.dir, target));
    std::vector<std::string> superseded;
    auto skipped = review::skip_in_force(states, opts, &superseded);
    say_rejected("apply: skipping", "--include-rejected applies them", "apply: not skipped", skipped, superseded);
    return base::Ok();
}

void say_rejected(const char* doing, const char* hint, const char* not_doing, const std::vector<std::string>& skipped,
                  const std::vector<std::string>& superseded) {
    if (!skipped.empty()) {
        std::fprintf(stderr, "layover: %s %zu rejected change(s) (%s):\n", doing, skipped.size(), hint);
        for (const auto& l : skipped) std::fprintf(stderr, "  %s\n", l.c_str());
    }
    for (const auto& l : superseded) std::fprintf(stderr, "layover: %s: %s\n", not_doing, l.c_str());
}
