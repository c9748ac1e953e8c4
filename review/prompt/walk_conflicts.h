// Before a hunk walk (`apply -p`, the exit prompt's `hunks`): apply's
// conflict check, run as a dry run of the selection the walk starts from,
// so that a file apply would refuse is said before its questions, not after
// the last answer (early4: a file changed on both sides that did not merge
// was walked hunk by hunk, and refused once every answer was given).
#pragma once
#include <string>

#include "review/apply/apply.h"
#include "review/prompt/hunk_walk.h"

namespace review {

// The conflicts a dry run of `opts` (its target, --only/--exclude, --force;
// no hunks chosen yet) finds, by path; none when the check itself fails (the
// apply after the walk says why).
WalkConflicts conflicts_before_walk(const capture::Patch& patch, ApplyOptions opts);

enum class ConflictStep { None, Skip, Whole };

// What the walk does with the change at `path`: nothing special (None), or,
// said in one line first because it or a path beneath it conflicts, leave it
// out unasked (Skip) or ask about it whole (Whole: hunks are never fitted to
// a file that moved).
ConflictStep conflict_step(const std::string& path, const WalkOptions& o);

}  // namespace review
