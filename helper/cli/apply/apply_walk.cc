#include "helper/cli/apply/apply_walk.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/store/session/session.h"
#include "review/prompt/answers.h"
#include "review/prompt/io.h"
#include "review/prompt/kept_walk.h"
#include "review/prompt/listing.h"
#include "review/prompt/walk_conflicts.h"

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

namespace {

bool refused_before_walk(const review::WalkConflicts& conflicts) {
    size_t hard = 0;
    for (const auto& [path, c] : conflicts) hard += c.hard ? 1 : 0;
    if (hard == 0) return false;
    std::fprintf(stderr,
                 "layover: apply: %zu conflict%s --force does not override; apply would refuse %s whatever the "
                 "answers, so nothing was asked or applied:\n",
                 hard, hard == 1 ? "" : "s", hard == 1 ? "it" : "them");
    for (const auto& [path, c] : conflicts)
        if (c.hard) std::fprintf(stderr, "  %s: %s\n", base::display_path(path).c_str(), c.reason.c_str());
    std::fputs("fix: put back what they need, or leave them out with --exclude GLOB, then run 'apply -p' again\n",
               stderr);
    return true;
}

// --force overrides the conflicts said before their questions; one that
// arose while the questions were asked (a file answered `y` whole, edited on
// the target since) was overridden unsaid (attack30): the check runs again
// on the selection chosen, and a conflict new since refuses the apply.
bool changed_during_walk(const capture::Patch& patch, const review::ApplyOptions& opts,
                         const review::WalkConflicts& before) {
    if (!opts.force) return false;  // without --force apply itself refuses a new conflict
    review::WalkConflicts now = review::conflicts_before_walk(patch, opts);
    std::erase_if(now, [&](const auto& e) { return before.count(e.first) > 0; });
    if (now.empty()) return false;
    std::fprintf(stderr,
                 "layover: apply: %zu conflict%s arose while the questions were asked; --force overrides only those "
                 "said before them, so nothing was applied:\n",
                 now.size(), now.size() == 1 ? "" : "s");
    for (const auto& [path, c] : now)
        std::fprintf(stderr, "  %s: %s\n", base::display_path(path).c_str(), c.reason.c_str());
    std::fputs("fix: run 'apply -p --force' again: your answers are kept, and those files are asked about anew\n",
               stderr);
    return true;
}

}  // namespace

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
    // apply's conflict check first: a conflict --force does not override
    // refuses the apply whatever the answers, so it is said before the first
    // question; a file apply would refuse is said before its own.
    review::WalkConflicts conflicts = review::conflicts_before_walk(patch, *opts);
    if (refused_before_walk(conflicts)) return Walked::Failed;
    wo.conflicts = &conflicts;
    wo.on_conflict = opts->force ? review::OnConflict::Forced : review::OnConflict::Skip;
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
    if (!w->all) {
        opts->only = w->only;
        opts->exclude.insert(opts->exclude.end(), w->exclude.begin(), w->exclude.end());
        opts->hunks = w->hunks;
    }
    return changed_during_walk(patch, *opts, conflicts) ? Walked::Failed : Walked::Chosen;
}

}  // namespace cli
