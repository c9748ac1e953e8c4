#include "helper/cli/apply_walk.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/store/session.h"
#include "review/prompt/answers.h"
#include "review/prompt/hunk_walk.h"
#include "review/prompt/io.h"
#include "review/prompt/listing.h"

namespace cli {

namespace {

std::string real_of(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// "" when there is no state dir to keep them in.
std::string answers_place(const capture::Patch& patch, const std::string& target, const std::string& session_dir) {
    auto state = session::state_dir();
    if (!state.ok()) return "";
    std::string source = patch.from_session() ? "session\n" + patch.manifest().session + "\n" + session_dir
                                              : "patch\n" + real_of(patch.file());
    return review::answers_file(*state, source, real_of(target));
}

}  // namespace

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
    std::string place = answers_place(patch, target, wo.session_dir);
    review::Answers saved;
    if (!place.empty()) {
        auto loaded = review::load_answers(place);
        if (!loaded.ok())
            std::fprintf(stderr,
                         "layover: apply: the answers kept from the last try cannot be read (%s); asking them all\n",
                         loaded.error().message.c_str());
        if (loaded.ok() && !loaded->given.empty()) {
            size_t n = loaded->given.size();
            std::string ans;
            if (review::ask("layover: apply: the last 'apply -p' of this " +
                                std::string(patch.from_session() ? "session" : "patch") + " to " +
                                base::display_path(target) + " did not apply; reuse its " + std::to_string(n) +
                                (n == 1 ? " answer" : " answers") + "? [Y/n] ",
                            &ans) != review::Input::Line) {
                std::fputs("\nlayover: apply: interrupted; nothing was applied\n", stderr);
                return Walked::Failed;
            }
            std::string a = review::normalize_answer(ans);
            if (a.empty() || a == "y" || a == "yes") {
                saved = std::move(*loaded);
                wo.saved = &saved;
            }
        }
    }
    auto w = review::walk_hunks(patch, wo);
    if (!w.ok()) {
        std::fprintf(stderr, "layover: apply: %s; nothing was applied\n", w.error().message.c_str());
        return Walked::Failed;
    }
    if (w->interrupted) {
        std::fputs("\nlayover: apply: interrupted; nothing was applied\n", stderr);
        return Walked::Failed;
    }
    if (wo.saved)
        std::fprintf(
            stderr,
            "layover: apply: reused %zu of the %zu answer(s) kept from the last try; what differs was asked again\n",
            w->reused, saved.given.size());
    if (w->taken == 0) {
        std::fputs("layover: apply: no change chosen; nothing was applied\n", stderr);
        if (!place.empty()) review::drop_answers(place);
        return Walked::Nothing;
    }
    if (!place.empty()) {
        w->answers.owner = patch.from_session() ? wo.session_dir : real_of(patch.file());
        if (auto s = review::save_answers(place, w->answers); s.ok()) {
            kept->file = place;
            kept->count = w->answers.given.size();
        } else {
            std::fprintf(stderr, "layover: apply: your answers could not be kept for another try: %s\n",
                         s.error().message.c_str());
        }
    }
    if (w->all) return Walked::Chosen;
    opts->only = w->only;
    opts->exclude.insert(opts->exclude.end(), w->exclude.begin(), w->exclude.end());
    opts->hunks = w->hunks;
    return Walked::Chosen;
}

}  // namespace cli
