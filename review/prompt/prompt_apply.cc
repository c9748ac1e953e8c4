// The exit prompt's [a]: apply what is picked (hunks taken by `hunks`,
// rejections in force left out), its conflicts and secrets asked about,
// then the session trashed or, after a partial apply, the menu again.
#include <unistd.h>

#include "capture/patch/known_bases.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "review/apply/partial.h"
#include "review/prompt/io.h"
#include "review/prompt/prompt.h"
#include "review/prompt/prompt_menu.h"
#include "review/prompt/rejected_patch.h"
#include "review/prompt/risk_scan.h"
#include "review/prompt/text.h"
#include "review/prompt/trash.h"

namespace review::exit_prompt {

Next Prompt::apply() {
    size_t n = count_selected();
    if (n == 0) {  // nothing picked, or `hunks` took none
        say_nothing_selected();
        return Next::Menu;
    }
    ApplyOptions ao;
    PickScope picked = scope();
    ao.only = picked.only, ao.exclude = picked.exclude;
    if (walked) {  // within the pick: what it left out beneath a picked dir stays out
        ao.only = walked->only, ao.hunks = walked->hunks;
        ao.exclude.insert(ao.exclude.end(), walked->exclude.begin(), walked->exclude.end());
    }
    ao.progress = ::isatty(2) == 1;
    // The rejections in force are left out: said, and counted out of the
    // question, before it is asked ("Apply 1 change?" then applied 0 when
    // only rejected changes were left). A rejected dir takes what it
    // holds along: each picked change its exclude covers is counted out
    // (attack39: a rejected new dir of 2 files asked 'Apply 2 changes?').
    std::vector<std::string> superseded, skipped;
    size_t excluded = ao.exclude.size();
    if (!walked)  // `hunks` asked about them again
        skipped = skip_in_force(picked_only(rejections, changes(), selected), &ao, &superseded);
    if (ao.exclude.size() > excluded) {
        base::PathFilter rejected({}, {ao.exclude.begin() + static_cast<long>(excluded), ao.exclude.end()});
        for (size_t i = 0; i < selected.size(); i++)
            if (selected[i] && n > 0 && rejected.excluded(changes()[i].path)) n--;
    }
    if (!skipped.empty()) {
        std::fprintf(stderr, "layover: skipping %zu rejected change(s):\n", skipped.size());
        for (const auto& l : skipped) std::fprintf(stderr, "  %s\n", l.c_str());
    }
    if (n == 0) {
        std::fprintf(stderr,
                     "layover: every selected change is rejected; nothing left to apply ([p] picks others; "
                     "'layover rejections %s' lists the rejections)\n",
                     base::display_path(s.meta.name).c_str());
        return Next::Menu;
    }
    std::string yn;
    std::string target = patch.manifest().target;
    if (ask("Apply " + std::to_string(n) + (n == 1 ? " change" : " changes") + " to " + base::display_path(target) +
                "? [y/N] ",
            &yn) != Input::Line)
        return Next::Kept;
    if (normalize_answer(yn) != "y" && normalize_answer(yn) != "yes") return Next::Menu;
    if (!secrets_confirmed()) return Next::Menu;
    (void)capture::remember_bases(s.dir, patch.manifest());  // killed, then recovered: no stale copy
    for (;;) {
        auto r = apply_patch(patch, ao);
        if (!r) {
            // Rolled back: the originals are back with a new ctime, still the
            // bases the sandbox copied (a retry is no stale-copy conflict).
            (void)capture::remember_bases(s.dir, patch.manifest());
            std::fprintf(stderr, "layover: apply failed, nothing was changed: %s\n", r.error().message.c_str());
            return Next::Menu;
        }
        const ApplyReport& rep = r.value();
        if (rep.conflicts.empty()) return applied(rep, !ao.only.empty() || !skipped.empty());
        std::fprintf(stderr, "layover: %zu conflict(s); nothing was applied:\n", rep.conflicts.size());
        for (const auto& c : rep.conflicts)
            std::fprintf(stderr, "  %s: %s\n", base::display_path(c.path).c_str(), c.reason.c_str());
        std::string ch;
        if (ask("  [f] overwrite them    [x] apply the rest    [b] back to the menu (default): ", &ch) != Input::Line)
            return Next::Kept;
        std::string c = normalize_answer(ch);
        if (c == "f") {
            ao.force = true;
        } else if (c == "x") {
            ao.only = without_conflicts(rep.conflicts);
            if (ao.only.empty()) {
                std::fputs("layover: every selected change conflicts; nothing left to apply\n", stderr);
                return Next::Menu;
            }
        } else {
            return Next::Menu;
        }
    }
}

bool Prompt::secrets_confirmed() {
    if (!risks) return true;  // no scan: no secrets known (the prompt always sets it)
    std::vector<std::string> picked;
    std::vector<size_t> files;  // the changes holding them, each once
    // By the raw path, never by the line's text: a name shown escaped (a
    // quote, a newline) never matched its line's prefix, and its secret went
    // unasked (attack52).
    for (const auto& [path, hit] : risks->secrets) {
        for (size_t i = 0; i < selected.size(); i++) {
            if (!selected[i] || changes()[i].path != path) continue;
            picked.push_back(secret_line(path, hit));
            if (files.empty() || files.back() != i) files.push_back(i);
            break;
        }
    }
    if (picked.empty()) return true;
    std::fprintf(stderr, "layover: the agent wrote %zu secret(s):\n", picked.size());
    for (const auto& l : picked) std::fprintf(stderr, "  %s\n", l.c_str());
    std::string yn;
    if (ask("Apply these secrets too? [y/N] ", &yn) != Input::Line) return false;
    if (normalize_answer(yn) == "y" || normalize_answer(yn) == "yes") return true;
    std::fprintf(stderr, "layover: nothing was applied; to apply the rest without the secrets: [p], then %s\n",
                 leave_out_answer(files).c_str());
    return false;
}

std::string Prompt::leave_out_answer(std::vector<size_t> idx) const {
    std::sort(idx.begin(), idx.end());
    idx.erase(std::unique(idx.begin(), idx.end()), idx.end());
    std::string out;
    for (size_t i : idx) {
        const std::string& p = changes()[i].path;
        bool plain = base::display_path(p) == p && p.find_first_of(" ,*?[") == std::string::npos &&
                     p.find_first_not_of("0123456789-") != std::string::npos;
        out += (out.empty() ? "-" : " -") + (plain ? p : std::to_string(i + 1));
    }
    return out;
}

std::vector<std::string> Prompt::without_conflicts(const std::vector<Conflict>& conflicts) const {
    std::vector<std::string> out;
    for (size_t i = 0; i < selected.size(); i++) {
        if (!selected[i]) continue;
        const std::string& p = changes()[i].path;
        bool hit = false;
        for (const auto& c : conflicts)
            hit = hit || c.path == p ||
                  (c.path.size() > p.size() && c.path.compare(0, p.size(), p) == 0 && c.path[p.size()] == '/');
        if (!hit) out.push_back(only_entry(p));
    }
    return out;
}

Next Prompt::applied(const ApplyReport& rep, bool partial) {
    drop_kept();
    (void)capture::remember_bases(s.dir, patch.manifest());     // undo, then apply again: not stale
    for (const auto& w : remember_partial(s.dir, rep.partial))  // hunks applied: the rest is no stale copy
        std::fprintf(stderr, "layover: %s\n", w.c_str());
    std::fprintf(stderr, "layover: applied %zu change(s) to %s\n", rep.applied.size(),
                 base::display_path(patch.manifest().target).c_str());
    if (!rep.undo.empty())
        std::fprintf(stderr, "layover: undo with: %s\n", undo_command(patch.manifest().target).c_str());
    if (partial) {
        capture::recount_changes(s);  // what `sessions` counts now
        return Next::Rest;            // the menu again, to save, discard, apply or keep the rest
    }
    (void)session::mark_applied(s.dir, rep.undo);  // the trash keeps it, marked applied
    auto t = move_to_trash(state, s);
    if (!t) {
        std::fprintf(stderr, "layover: the changes are applied, but %s\n", t.error().message.c_str());
        return Next::Done;
    }
    std::fprintf(stderr, "layover: %s\n", trashed_line(s.meta.name, *t).c_str());
    return Next::Done;
}

}  // namespace review::exit_prompt
