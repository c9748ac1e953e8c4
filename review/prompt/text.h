// Pure text of the exit-review prompt: the change summary with risky
// destinations marked, the menu, and the [p]ick list parser.
#pragma once
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"
#include "review/prompt/risk.h"

namespace review {

// One line per change ("  M  path  ! why"), then a total line. Risky lines
// carry a '!' and their reasons, spaced as status spaces them (marks_text;
// bold red when color is on).
// ignored: paths the ignore rules left out (one line before the total).
std::string summary_text(const std::vector<capture::Change>& changes, const RiskContext& ctx, bool color,
                         size_t* risky_count = nullptr, uint64_t ignored = 0);

// The numbered list shown by [p]: "[x] 1  M  path".
std::string pick_list(const std::vector<capture::Change>& changes, const std::vector<char>& selected);

// Apply a [p] answer to the selection: numbers and ranges (1-based, "2-5")
// toggle, "all" selects all, "none" clears; a path, directory or glob
// (base::PathFilter) selects what it names: first in the answer it picks
// just that ("src/ -tests/*"), "+X" adds, "-X" (X also a number or range)
// deselects. False (selection unchanged) with *error set on a bad token or
// one that matches no change.
bool apply_picks(const std::string& answer, const std::vector<capture::Change>& changes, std::vector<char>& selected,
                 std::string* error);

// The [p] selection as apply's, save's and `hunks`' (empty: all picked):
// each picked change an --only entry naming it alone (only_entry: a name
// holding '*', '?' or '[' is no glob), and each change left out beneath a
// picked one an --exclude of it, unless something picked lies beneath it
// (then needed). attack39: the raw paths were globs there (a picked
// `notes[1].txt` brought `notes1.txt`), and a picked new dir brought every
// change in it, those left out too.
struct PickScope {
    std::vector<std::string> only, exclude;
};
PickScope pick_scope(const std::vector<capture::Change>& changes, const std::vector<char>& selected);

// "12 of 1,725 changes picked"
std::string picked_line(const std::vector<char>& selected);

extern const char kMenu[];
// What `?` at the menu prints: each letter, one line each.
extern const char kMenuHelp[];
// The ask after [p]'s list, also what `?` there prints.
extern const char kPickHelp[];

// A menu answer (normalize_answer'ed) as its letter: a letter, or the word
// the menu names it by ("diff", "review", "apply", "save", "pick", "keep",
// "discard") gives r, a, s, p, k, d; "?", "h" and "help" give "?"; Enter
// gives "k" (it never throws work away). Anything else ("hunks", which the
// menu takes as [p]'s hunks over the current pick) comes back as it is.
std::string menu_choice(const std::string& answer);

}  // namespace review
