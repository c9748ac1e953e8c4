// The exit prompt's menu (prompt.cc): the session's patch, what is picked,
// and each choice's step. Internal to review/prompt.
#pragma once
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/store/session/session.h"
#include "review/apply/apply.h"
#include "review/prompt/answers.h"
#include "review/prompt/hunk_walk.h"
#include "review/prompt/kept_walk.h"
#include "review/prompt/rejected.h"
#include "review/prompt/risk.h"
#include "review/prompt/text.h"

namespace review::exit_prompt {

// Rest: part of the session applied; the menu again, over what it still holds.
enum class Next { Menu, Done, Failed, Kept, Rest };

// The menu's state over one patch of the session; its choices in
// prompt.cc (review, discard, save, pick, hunks) and prompt_apply.cc (apply).
struct Prompt {
    const std::string& state;
    const session::Info& s;
    const capture::Patch& patch;
    std::vector<char> selected;
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
    const RiskContext* risks = nullptr;  // the summary's marks, shown again by `hunks`; its secrets asked about by [a]

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

    Next review();
    // Never on a bare Enter: discarding asks first (the session then stays
    // restorable from the trash for a day).
    Next discard();
    Next save();
    // The list once (short lists) and then only a running count.
    Next pick();
    // `hunks` in [p]: the picked changes hunk by hunk (apply -p's walker).
    Next hunks();
    // Apply with the given scope; conflicts offer force / skip them / back.
    Next apply();
    // Secrets in what is selected are named and asked about once more.
    bool secrets_confirmed();
    // What [p] takes to leave these changes out: "-PATH" per change, or
    // "-N" (its number in the list) for a name the answer cannot hold.
    std::string leave_out_answer(std::vector<size_t> idx) const;
    std::vector<std::string> without_conflicts(const std::vector<Conflict>& conflicts) const;
    Next applied(const ApplyReport& rep, bool partial);
};

}  // namespace review::exit_prompt
