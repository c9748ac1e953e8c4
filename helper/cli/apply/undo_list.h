// `layover undo --list` and `--last`: the undo records of one target.
#pragma once
#include <string>

#include "helper/base/result.h"

// The target --list/--last work on: DIR made absolute and real, or $HOME.
base::Result<std::string> undo_target(const std::string& dir);
// Print the records (newest first), as a table or --json. Returns the exit code.
int undo_list(const std::string& target, bool json, bool target_given);
// The newest record of the target (what `undo --last` undoes).
// target_given false (the $HOME default): refused when the current dir lies
// in another tree whose newest apply is newer (the error names both).
base::Result<std::string> newest_record(const std::string& target, bool target_given);
// After an undo of `record` (a record path, or its undo.json): the sessions,
// kept or in the trash, whose apply it was are no longer `applied` (their
// changes are out of the real tree again: `sessions` lists them as kept, and
// gc's pruning of old applied sessions no longer takes them). A kept
// session of `source` over `target` (the record's) gets its change count
// taken again: an undo of a partial apply (`--only`, `-- PATH`, `--hunks`)
// gives back changes that apply's recount had taken off.
void unmark_undone(const std::string& record, const std::string& source, const std::string& target);
// After apply of the patch FILE on `target` found conflicts: when an undo
// record says that file was applied there already (the commonest cause:
// applying it twice), a note naming when and how to see it; else "".
std::string applied_before_note(const std::string& target, const std::string& file);
