#include "review/prompt/prompt.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>

#include "capture/patch/known_bases.h"
#include "capture/patch/reader.h"
#include "capture/patch/save.h"
#include "capture/scan/session_scan.h"
#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/base/term.h"
#include "helper/base/text.h"
#include "review/apply/apply.h"
#include "review/apply/partial.h"
#include "review/diff/show.h"
#include "review/prompt/answers.h"
#include "review/prompt/hunk_walk.h"
#include "review/prompt/io.h"
#include "review/prompt/kept_walk.h"
#include "review/prompt/prompt_save.h"
#include "review/prompt/rejected_patch.h"
#include "review/prompt/risk_links.h"
#include "review/prompt/risk_patch.h"
#include "review/prompt/risk_scan.h"
#include "review/prompt/text.h"
#include "review/prompt/trash.h"
#include "review/prompt/walk_conflicts.h"

namespace review {

namespace {

// Rest: part of the session applied; the menu again, over what it still holds.
enum class Next { Menu, Done, Failed, Kept, Rest };

struct Prompt {
    const std::string& state;
    const session::Info& s;
    const capture::Patch& patch;
    std::vector<char> selected;
    std::vector<std::string> secrets = {};        // "path:line: kind", for the secrets check before applying
    std::optional<WalkResult> walked = {};        // [p] then `hunks`: the answers, until the pick changes
    std::vector<RejectionState> rejections = {};  // `layover reject`ed: [a] skips those in force, as apply does
    KeptWalk kept = {};  // `hunks`: its answers, kept (as `apply -p` keeps them) until an apply or a discard

    // The session applied or discarded: the answers kept for it are of no more use.
    void drop_kept() {
        if (!kept.file.empty()) drop_answers(kept.file);
        kept = {};
    }
    // The session kept: where its answers wait.
    void say_kept() const {
        if (kept.file.empty() || kept.count == 0) return;
        std::fprintf(stderr,
                     "layover: your %zu answer(s) are kept: 'layover apply %s -p' or the exit prompt's hunks offers "
                     "to reuse them (a hunk or change that differs by then is asked again)\n",
                     kept.count, s.meta.name.c_str());
    }
    const RiskContext* risks = nullptr;  // the summary's marks, shown again by `hunks`

    const std::vector<capture::Change>& changes() const { return patch.manifest().changes; }
    bool all_selected() const {
        for (char c : selected)
            if (!c) return false;
        return true;
    }
    PickScope scope() const { return pick_scope(changes(), selected); }
    // [p] left nothing picked: said, as [a] says it. The scope is empty
    // then, which save, review and hunks read as every change (attack51:
    // [s] saved the whole session, what was just left out too).
    bool none_picked() const {
        if (selected.empty() || std::find(selected.begin(), selected.end(), 1) != selected.end()) return false;
        say_nothing_selected();
        return true;
    }
    static void say_nothing_selected() { std::fputs("layover: nothing is selected; [p] picks files\n", stderr); }
    size_t count_selected() const {
        if (walked) return walked->taken;
        size_t n = 0;
        for (char c : selected) n += c ? 1 : 0;
        return n;
    }

    Next review() {
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

    // Never on a bare Enter: discarding asks first (the session then stays
    // restorable from the trash for a day).
    Next discard() {
        std::string yn;
        size_t n = patch.manifest().changes.size();
        if (ask("Discard session '" + s.meta.name + "' and its " + std::to_string(n) +
                    (n == 1 ? " change" : " changes") + "? [y/N] ",
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

    Next save() {
        if (none_picked()) return Next::Menu;
        auto in_pick = picked_only(rejections, changes(), selected);  // an unpicked rejected dir takes nothing
        return save_from_prompt(state, s, patch, scope(), in_pick) ? Next::Menu : Next::Kept;
    }

    // The list once (short lists) and then only a running count.
    Next pick() {
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

    // `hunks` in [p]: the picked changes hunk by hunk (apply -p's walker).
    Next hunks() {
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

    // Apply with the given scope; conflicts offer force / skip them / back.
    Next apply() {
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
            if (ask("  [f] overwrite them    [x] apply the rest    [b] back to the menu (default): ", &ch) !=
                Input::Line)
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

    // Secrets in what is selected are named and asked about once more.
    bool secrets_confirmed() {
        std::vector<std::string> picked;
        std::vector<size_t> files;  // the changes holding them, each once
        for (const auto& l : secrets) {
            for (size_t i = 0; i < selected.size(); i++) {
                if (!selected[i]) continue;
                // The line starts with the name as shown: escaped, longer than
                // the raw path (attack52: a quote in it and the secret went unasked).
                std::string shown = base::display_path(changes()[i].path) + ":";
                if (l.compare(0, shown.size(), shown) == 0) {
                    picked.push_back(l);
                    if (files.empty() || files.back() != i) files.push_back(i);
                    break;
                }
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

    // What [p] takes to leave these changes out: "-PATH" per change, or
    // "-N" (its number in the list) for a name the answer cannot hold.
    std::string leave_out_answer(std::vector<size_t> idx) const {
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

    std::vector<std::string> without_conflicts(const std::vector<Conflict>& conflicts) const {
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

    Next applied(const ApplyReport& rep, bool partial) {
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
};

}  // namespace

void print_kept(const std::string& name) {
    end_line();
    std::fprintf(stderr,
                 "layover: session '%s' kept; review it later with 'layover diff %s', 'layover apply %s' or "
                 "'layover discard %s'\n",
                 name.c_str(), name.c_str(), name.c_str(), name.c_str());
}

namespace {

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
    p.secrets = secret_lines(ctx);
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
