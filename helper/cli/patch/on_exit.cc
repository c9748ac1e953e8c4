// `layover-patch on-exit MODE SESSION`: run by the supervisor once the
// sandboxed command exits, for MODE prompt, apply or save:FILE. The session
// is never lost: any failure keeps it, says why, and returns 125.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "capture/patch/kept_data.h"
#include "capture/patch/known_bases.h"
#include "capture/patch/reader.h"
#include "capture/patch/save.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/base/text.h"
#include "helper/cli/apply/apply_rejected.h"
#include "helper/cli/common/verbs.h"
#include "helper/cli/patch/patch_out.h"
#include "helper/sandbox/prepare/discard.h"
#include "helper/store/session/session.h"
#include "review/apply/apply.h"
#include "review/apply/partial.h"
#include "review/prompt/prompt.h"
#include "review/prompt/risk_patch.h"
#include "review/prompt/risk_scan.h"
#include "review/prompt/trash.h"

namespace {

int on_exit_apply(const std::string& state, const session::Info& s) {
    const std::string& name = s.meta.name;
    capture::Limits limits;
    limits.keep_decoded = capture::KeptData::kApplyBudget;  // staging writes what validation decoded
    auto patch = capture::Patch::open_session(name, limits);
    if (!patch) {
        std::fprintf(stderr, "layover: on-exit apply: reading session '%s': %s\n", name.c_str(),
                     patch.error().message.c_str());
        review::print_kept(name);
        return 125;
    }
    if (patch->manifest().changes.empty()) {
        std::fprintf(stderr, "layover: session '%s' made no changes; nothing to apply\n", name.c_str());
        auto t = review::move_to_trash(state, s);
        if (!t) std::fprintf(stderr, "layover: %s\n", t.error().message.c_str());
        return 0;
    }
    // As `apply --yes`: secrets the agent wrote are never applied unasked.
    if (auto secrets = review::secret_lines(review::risk_context_of_patch(patch.value())); !secrets.empty()) {
        std::fprintf(stderr, "layover: on-exit apply: %zu secret(s) written by the agent; nothing was applied:\n",
                     secrets.size());
        for (const auto& l : secrets) std::fprintf(stderr, "  %s\n", l.c_str());
        std::fprintf(stderr, "layover: look with 'layover diff %s'; 'layover apply %s --allow-secrets' applies them\n",
                     name.c_str(), name.c_str());
        review::print_kept(name);
        return 125;
    }
    review::ApplyOptions ao;
    ao.progress = ::isatty(2) == 1;
    // As `apply NAME`: what a person rejected (`layover reject`) stays in the session.
    if (auto sr = skip_rejected(patch.value(), patch->manifest().target, &ao); !sr) {
        std::fprintf(stderr, "layover: on-exit apply: %s; nothing was applied\n", sr.error().message.c_str());
        review::print_kept(name);
        return 125;
    }
    bool partial = !ao.exclude.empty() || !ao.hunks.empty();
    (void)capture::remember_bases(s.dir, patch->manifest());  // killed, then recovered: no stale copy
    auto r = review::apply_patch(patch.value(), ao);
    if (!r) {
        (void)capture::remember_bases(s.dir, patch->manifest());  // rolled back: a retry is no stale copy
        std::fprintf(stderr, "layover: on-exit apply failed, nothing was changed: %s\n", r.error().message.c_str());
        review::print_kept(name);
        return 125;
    }
    if (!r->conflicts.empty()) {
        std::fprintf(stderr, "layover: on-exit apply: %zu conflict(s), nothing was applied:\n", r->conflicts.size());
        for (const auto& c : r->conflicts)
            std::fprintf(stderr, "  %s: %s\n", base::display_path(c.path).c_str(), c.reason.c_str());
        std::fprintf(stderr, "layover: review with 'layover diff %s'; 'layover apply %s --force' overwrites\n",
                     name.c_str(), name.c_str());
        review::print_kept(name);
        return 125;
    }
    std::fprintf(stderr, "layover: applied %zu change(s) to %s\n", r->applied.size(),
                 base::display_path(patch->manifest().target).c_str());
    if (!r->undo.empty())
        std::fprintf(stderr, "layover: undo with: %s\n", review::undo_command(patch->manifest().target).c_str());
    (void)capture::remember_bases(s.dir, patch->manifest());  // undo, then apply again: not stale
    if (partial) {                                            // the rejected changes stay in the session, which is kept
        for (const auto& w : review::remember_partial(s.dir, r->partial))
            std::fprintf(stderr, "layover: on-exit apply: %s\n", w.c_str());
        capture::recount_changes(s);  // what `sessions` counts now, as after the exit prompt's partial apply
        std::fprintf(stderr, "layover: session '%s' kept: it still holds the rejected changes\n", name.c_str());
        return 0;
    }
    // Applied: the session is redundant, but kept recoverable for a day.
    (void)session::mark_applied(s.dir, r->undo);
    auto t = review::move_to_trash(state, s);
    if (!t) std::fprintf(stderr, "layover: the changes are applied, but %s\n", t.error().message.c_str());
    // As the exit prompt's apply says it: `sessions` no longer lists it.
    else std::fprintf(stderr, "layover: %s\n", review::trashed_line(name, *t).c_str());
    return 0;
}

int on_exit_save(const std::string& state, const session::Info& s, const std::string& file) {
    const std::string& name = s.meta.name;
    if (file.empty()) {
        std::fprintf(stderr, "layover: on-exit save: no file given (use --on-exit save:FILE)\n");
        review::print_kept(name);
        return 125;
    }
    if (std::string other = cli::other_file_at(file); !other.empty()) {
        std::fprintf(stderr, "layover: on-exit save: %s\n", other.c_str());
        review::print_kept(name);
        return 125;
    }
    auto r = capture::save_session(s, file);
    if (!r) {
        std::fprintf(stderr, "layover: on-exit save to %s failed: %s\n", base::display_path(file).c_str(),
                     r.error().message.c_str());
        review::print_kept(name);
        return 125;
    }
    std::fprintf(stderr, "layover: saved session '%s' to %s\n", name.c_str(), base::display_path(file).c_str());
    auto rm = remove_aside(state, s.dir, "saved");  // a kill mid-removal: never half a session in sessions/
    if (!rm)
        std::fprintf(stderr, "layover: the patch is saved, but removing session '%s' failed: %s\n", name.c_str(),
                     rm.error().message.c_str());
    return 0;
}

}  // namespace

int cmd_on_exit(int argc, char** argv) {
    if (argc != 3) {
        std::fputs("usage: layover-patch on-exit prompt|apply|save:FILE SESSION\n", stderr);
        return 125;
    }
    std::string mode = argv[1], name = argv[2];
    auto state = session::state_dir();
    if (!state) {
        std::fprintf(stderr, "layover: on-exit: %s\n", state.error().message.c_str());
        return 125;
    }
    auto s = session::find(state.value(), name);
    if (!s) {
        std::fprintf(stderr, "layover: on-exit: %s\n", s.error().message.c_str());
        return 125;
    }
    if (mode == "prompt") return review::run_exit_prompt(state.value(), s.value());
    if (mode == "apply") return on_exit_apply(state.value(), s.value());
    if (mode.compare(0, 5, "save:") == 0) return on_exit_save(state.value(), s.value(), mode.substr(5));
    std::fprintf(stderr, "layover: on-exit: unknown mode '%s' (prompt, apply or save:FILE)\n",
                 base::display_path(mode).c_str());
    return 125;
}
