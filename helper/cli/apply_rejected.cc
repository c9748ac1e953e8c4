#include "helper/cli/apply_rejected.h"

#include <cstdio>

#include "helper/store/session.h"
#include "review/prompt/rejected_patch.h"

base::Result<void> skip_rejected(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts) {
    if (!patch.from_session()) return base::Ok();
    TRY(std::string state, session::state_dir());
    TRY(session::Info info, session::find(state, patch.manifest().session));
    TRY(auto states, review::patch_rejections(patch, info.dir, target));
    std::vector<std::string> superseded;
    auto skipped = review::skip_in_force(states, opts, &superseded);
    if (!skipped.empty()) {
        std::fprintf(stderr, "layover: apply: skipping %zu rejected change(s) (--include-rejected applies them):\n",
                     skipped.size());
        for (const auto& l : skipped) std::fprintf(stderr, "  %s\n", l.c_str());
    }
    for (const auto& l : superseded) std::fprintf(stderr, "layover: apply: not skipped: %s\n", l.c_str());
    return base::Ok();
}
