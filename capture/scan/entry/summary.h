// The short, human summary of a change list (as `git status --short`):
// one line per change, a status letter then the display-escaped path, then a
// total line. Pure; used by status, show and the exit prompt.
#pragma once
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"

namespace capture {

// A new (or replaced) directory's subtree, folded into its one line as git
// folds `?? .venv/`: changes[at] is an added or opaque dir; `end` is the
// index past the changes below it (which are all additions), `files` and
// `bytes` count them. end == at + 1: nothing to fold.
struct Fold {
    size_t end = 0;
    uint64_t files = 0, bytes = 0;
    bool sized = true;  // false: a summary-only scan left sizes unknown (no statx below new dirs)
};
Fold fold_at(const std::vector<Change>& changes, size_t at);
// "1,725 files, 38 MB"
std::string fold_note(const Fold& f);

// stale: paths whose base is stale (marked "(changed on disk after the sandbox's version)").
// fold: new directories take one line each (`--expand` turns it off).
// ignored: paths the ignore rules left out, one line before the total
// (stale non-empty or saved: a patch file's, which left them out).
// extra: text appended to each line (show's modes, sizes and risk marks); a
// fold is not made when a change beneath it gets a "  ! " mark.
using Extra = std::function<std::string(const Change&)>;
std::string summary_text(const std::vector<Change>& changes, const std::set<std::string>& stale = {}, bool fold = true,
                         uint64_t ignored = 0, bool saved = false, const Extra& extra = nullptr);
std::string summary_line(const Change& c, bool stale = false);
// "5 changes: 4 added, 1 modified"; listed on fewer `lines` than changes (new
// dirs folded), it says so: "... (listed on 2 lines: a new dir's line stands
// for what it holds)" (0: not listed).
std::string total_line(const std::vector<Change>& changes, size_t lines = 0);

}  // namespace capture
