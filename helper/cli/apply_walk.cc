#include "helper/cli/apply_walk.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/store/session.h"
#include "review/prompt/answers.h"
#include "review/prompt/io.h"
#include "review/prompt/kept_walk.h"
#include "review/prompt/listing.h"

namespace cli {

KeptAnswers::~KeptAnswers() {
    if (done || file.empty() || count == 0) return;
    std::fprintf(stderr,
                 "layover: apply: your %zu answer(s) are kept: the same 'apply -p' again offers to reuse them (a "
                 "hunk or change that differs by then is asked again)\n",
                 count);
}

void KeptAnswers::applied() {
    done = true;
    if (!file.empty()) review::drop_answers(file);
}

Walked walk_answers(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts,
                    KeptAnswers* kept) {
    base::Fd root(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid()) {
        std::fprintf(stderr, "layover: apply: cannot open the target %s: %s\n", base::display_path(target).c_str(),
                     std::strerror(errno));
        return Walked::Failed;
    }
    review::WalkOptions wo;
    wo.root = root.get();
    wo.filter = base::PathFilter(opts->only, opts->exclude);
    // The path rules' marks (a read of no content: the first question comes
    // at once); secrets are named, and asked about, once the walk ends.
    review::RiskContext risks = review::risk_context_for(target);
    wo.risks = &risks;
    if (patch.from_session())
        if (auto state = session::state_dir(); state.ok())
            if (auto info = session::find(*state, patch.manifest().session); info.ok()) wo.session_dir = info->dir;
    review::InterruptGuard guard;
    std::string place = review::kept_answers_place(patch, target, wo.session_dir);
    review::KeptWalk k;
    auto w = review::walk_keeping(patch, target, place, wo, "layover: apply: ", &k);
    if (!w.ok()) {
        std::fprintf(stderr, "layover: apply: %s; nothing was applied\n", w.error().message.c_str());
        return Walked::Failed;
    }
    if (w->interrupted) {
        std::fputs("\nlayover: apply: interrupted; nothing was applied\n", stderr);
        return Walked::Failed;
    }
    if (w->taken == 0) {
        std::fputs("layover: apply: no change chosen; nothing was applied\n", stderr);
        return Walked::Nothing;
    }
    kept->file = k.file;
    kept->count = k.count;
    if (w->all) return Walked::Chosen;
    opts->only = w->only;
    opts->exclude.insert(opts->exclude.end(), w->exclude.begin(), w->exclude.end());
    opts->hunks = w->hunks;
    return Walked::Chosen;
}

}  // namespace cli
