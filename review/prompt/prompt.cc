#include "review/prompt/prompt.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "capture/patch/reader.h"
#include "capture/patch/save.h"
#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/base/term.h"
#include "helper/base/text.h"
#include "review/apply/apply.h"
#include "review/diff/show.h"
#include "review/prompt/answers.h"
#include "review/prompt/hunk_walk.h"
#include "review/prompt/io.h"
#include "review/prompt/kept_walk.h"
#include "review/prompt/prompt_menu.h"
#include "review/prompt/prompt_save.h"
#include "review/prompt/rejected_patch.h"
#include "review/prompt/risk_links.h"
#include "review/prompt/risk_patch.h"
#include "review/prompt/risk_scan.h"
#include "review/prompt/text.h"
#include "review/prompt/trash.h"
#include "review/prompt/walk_conflicts.h"

namespace review {

namespace exit_prompt {

Next Prompt::review() {
    if (none_picked()) return Next::Menu;
    ShowOptions o;
    PickScope picked = scope();
    o.paths = picked.only, o.exclude = picked.exclude;
    bool tty = stdout_is_tty();
    o.escape = o.page = tty;
    o.color = base::color_for_fd(1);
    o.width = terminal_width();
    auto r = show_diff(patch, o);
    if (!r) std::fprintf(stderr, "layover: showing the diff: %s\n", r.error().message.c_str());
    return Next::Menu;
}

Next Prompt::discard() {
    std::string yn;
    size_t n = patch.manifest().changes.size();
    if (ask("Discard session '" + s.meta.name + "' and its " + std::to_string(n) + (n == 1 ? " change" : " changes") +
                "? [y/N] ",
            &yn) != Input::Line)
        return Next::Kept;
    if (normalize_answer(yn) != "y" && normalize_answer(yn) != "yes") return Next::Menu;
    auto r = move_to_trash(state, s);
    if (!r) {
        std::fprintf(stderr, "layover: %s\n", r.error().message.c_str());
        print_kept(s.meta.name);
        return Next::Failed;
    }
    drop_kept();
    std::fprintf(stderr,
                 "layover: session '%s' discarded; it stays in the trash for 24 hours ('layover restore %s' "
                 "brings it back)\n",
                 s.meta.name.c_str(), trash_entry(*r).c_str());
    return Next::Done;
}

Next Prompt::save() {
    if (none_picked()) return Next::Menu;
    auto in_pick = picked_only(rejections, changes(), selected);  // an unpicked rejected dir takes nothing
    return save_from_prompt(state, s, patch, scope(), in_pick) ? Next::Menu : Next::Kept;
}

Next Prompt::pick() {
    constexpr size_t kListed = 60;
    if (changes().size() <= kListed) std::fputs(pick_list(changes(), selected).c_str(), stderr);
    else std::fprintf(stderr, "  %s changes; 'list' numbers them all\n", base::thousands(changes().size()).c_str());
    std::fputs(kPickHelp, stderr);
    for (;;) {
        std::string ans;
        Input in = ask("Pick (" + picked_line(selected) + "; Enter when done): ", &ans);
        if (in != Input::Line) return Next::Kept;
        std::string a = normalize_answer(ans);
        if (a.empty()) return Next::Menu;
        if (a == "hunks") return hunks();
        if (a == "?" || a == "help") {  // not the glob '?': it picked every one-letter name
            std::fputs(kPickHelp, stderr);
            continue;
        }
        walked.reset();
        if (a == "list") {
            std::fputs(pick_list(changes(), selected).c_str(), stderr);
            continue;
        }
        std::string err;
        // Paths keep their case: only the keywords are lowercased.
        std::string raw = ans;
        while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\r')) raw.pop_back();
        if (!apply_picks(raw, changes(), selected, &err)) std::fprintf(stderr, "layover: %s\n", err.c_str());
    }
}

Next Prompt::hunks() {
    walked.reset();
    if (none_picked()) return Next::Menu;
    base::Fd root(::open(patch.manifest().target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    WalkOptions wo;
    wo.root = root.get();
    PickScope picked = scope();
    wo.filter = base::PathFilter(picked.only, picked.exclude);
    wo.session_dir = s.dir;
    wo.risks = risks;
    ApplyOptions check;  // apply's conflict check first: a file it would refuse is said before its questions
    check.only = picked.only, check.exclude = picked.exclude;
    WalkConflicts conflicts = conflicts_before_walk(patch, check);
    wo.conflicts = &conflicts;
    wo.on_conflict = OnConflict::Prompt;
    std::string place = kept_answers_place(patch, patch.manifest().target, s.dir);
    auto w = walk_keeping(patch, patch.manifest().target, place, wo, "layover: ", &kept);
    if (!w.ok()) {
        std::fprintf(stderr, "layover: %s\n", w.error().message.c_str());
        return Next::Menu;
    }
    if (w->interrupted) return Next::Kept;
    if (!w->all) walked = std::move(*w);
    std::fprintf(stderr, "layover: %zu change(s) chosen; [a] applies them ([r] and [s] take files whole)\n",
                 count_selected());
    return Next::Menu;
}

}  // namespace exit_prompt

void print_kept(const std::string& name) {
    end_line();
    std::fprintf(stderr,
                 "layover: session '%s' kept; review it later with 'layover diff %s', 'layover apply %s' or "
                 "'layover discard %s'\n",
                 name.c_str(), name.c_str(), name.c_str(), name.c_str());
}

namespace {

using exit_prompt::Next;
using exit_prompt::Prompt;

constexpr int kRest = -1;  // Next::Rest: the prompt again, over what the session still holds

// The summary of the session as it is now, then the menu. first: as the
// command exits; else after a partial apply, over what the session still
// holds (a scan of it again: what was applied is no change any more).
int prompt_over(const std::string& state, const session::Info& s, bool first) {
    auto patch = capture::Patch::open_session(s.meta.name);
    if (!patch) {
        std::fprintf(stderr, "layover: reading session '%s': %s\n", s.meta.name.c_str(), patch.error().message.c_str());
        print_kept(s.meta.name);
        return first ? 125 : 0;
    }
    const auto& changes = patch->manifest().changes;
    if (changes.empty() && !first) {
        print_kept(s.meta.name);
        return 0;
    }
    if (changes.empty()) {
        uint64_t ign = patch->manifest().ignored;
        std::fprintf(stderr, "layover: session '%s' made no changes; nothing to review\n", s.meta.name.c_str());
        auto t = move_to_trash(state, s);
        if (!t) std::fprintf(stderr, "layover: %s\n", t.error().message.c_str());
        else if (ign)  // ignored, never lost: the trash keeps them for a day
            std::fprintf(stderr,
                         "layover: it wrote %s path(s) in ignored caches; 'layover restore %s' brings it back\n",
                         base::thousands(ign).c_str(), s.meta.name.c_str());
        return 0;
    }
    RiskContext ctx = risk_context_of_patch(patch.value());
    // A session's own target: home rules only where $HOME really is.
    const char* home = std::getenv("HOME");
    ctx.home_rel = home ? home_relative(patch->manifest().target, home) : std::nullopt;
    if (const char* xdg = std::getenv("XDG_CONFIG_HOME"); xdg && xdg[0] == '/')
        ctx.config_rel = home_relative(patch->manifest().target, std::string(xdg) + "/layover");
    add_home_links(&ctx, patch->manifest().target);
    bool color = base::color_for_fd(2);
    std::string summary = summary_text(changes, ctx, color, nullptr, patch->manifest().ignored);
    if (first)
        std::fprintf(stderr, "\nlayover: session '%s' changed %s:\n%s", s.meta.name.c_str(),
                     base::display_path(patch->manifest().target).c_str(), summary.c_str());
    else
        std::fprintf(stderr, "layover: session '%s' still holds the changes not applied:\n%s", s.meta.name.c_str(),
                     summary.c_str());
    auto rejections = patch_rejections(patch.value(), s.dir, patch->manifest().target);
    if (!rejections) std::fprintf(stderr, "layover: rejections: %s\n", rejections.error().message.c_str());
    else
        for (const auto& r : *rejections) std::fprintf(stderr, "R  %s\n", rejection_line(r).c_str());

    Prompt p{state, s, patch.value(), std::vector<char>(changes.size(), 1)};
    if (rejections) p.rejections = std::move(*rejections);
    p.risks = &ctx;
    for (;;) {
        flush_typeahead();
        std::fputs(kMenu, stderr);
        std::string sel = p.all_selected() ? ""
                                           : " (" + std::to_string(p.count_selected()) + " of " +
                                                 std::to_string(changes.size()) + " picked)";
        std::string ans;
        Input in = ask("What now" + sel + "? [r/a/s/p/K/d] ", &ans);
        Next next = Next::Menu;
        if (in != Input::Line) {
            end_line();
            next = Next::Kept;
        } else {
            std::string c = menu_choice(normalize_answer(ans));
            if (c == "r") next = p.review();
            else if (c == "a") next = p.apply();
            else if (c == "s") next = p.save();
            else if (c == "p" || c == "hunks") next = c == "p" ? p.pick() : p.hunks();  // hunks: p, then hunks
            else if (c == "k") next = Next::Kept;  // Enter too: it never throws work away
            else if (c == "d") next = p.discard();
            else if (c == "?") std::fputs(kMenuHelp, stderr);
            else
                std::fprintf(stderr,
                             "layover: unknown choice '%s'; answer r, a, s, p, k or d (? says what each does)\n",
                             base::display_path(c).c_str());
        }
        if (InterruptGuard::interrupted() && (next == Next::Menu || next == Next::Rest)) next = Next::Kept;
        switch (next) {
            case Next::Menu: continue;
            case Next::Rest: return kRest;
            case Next::Done: return 0;
            case Next::Failed: p.say_kept(); return 125;
            case Next::Kept:
                p.say_kept();
                print_kept(s.meta.name);
                return 0;
        }
    }
}

}  // namespace

int run_exit_prompt(const std::string& state, const session::Info& s) {
    InterruptGuard guard;
    for (bool first = true;; first = false)
        if (int rc = prompt_over(state, s, first); rc != kRest) return rc;
}

}  // namespace review
