// 3-way merge at apply time: a modified text file whose real content moved
// since the patch's base, when the patch carries the original (layover-patch/2),
// gets the merge of both change sets (review/diff/merge3.h) instead of a
// conflict. Overlapping changes stay a conflict, listed with their line
// ranges, unless markers were asked for (--conflict=markers).
#pragma once
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"
#include "review/apply/plan.h"

namespace review {

// Items with only a content conflict on a mergeable file are merged: their
// `content` set, their conflicts cleared, their path added to rep->merged
// (and rep->marked when conflict markers were written); items that overlap
// get one conflict naming the ranges, and an entry in rep->merge_conflicts.
base::Result<void> merge_moved(int root, const capture::Patch& patch, const ApplyOptions& opts,
                               std::vector<PlanItem>& items, ApplyReport* rep);

}  // namespace review
