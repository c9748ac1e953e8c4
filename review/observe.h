// Compare the real target with the patch's base records (the conflict check),
// and re-check just before commit that nothing moved since.
#pragma once
#include <vector>

#include "capture/reader.h"
#include "helper/base/result.h"
#include "review/fsops.h"
#include "review/plan.h"

namespace review {

// Fill each item's before/before_tree/conflicts. Errors only for I/O
// failures; unsafe layouts (a symlinked or missing parent) become hard
// conflicts, which --force does not override.
base::Result<void> observe(int root, DirCache& dirs, const capture::Manifest& man, std::vector<PlanItem>& items);

// Every entry beneath directory `rel` (paths relative to it), sorted.
base::Result<std::vector<EntryStat>> walk_tree(int root, const std::string& rel);

// "" when `now` is what `then` recorded (type, inode, mode, size, mtime,
// ctime); otherwise a reason.
std::string same_entry(const EntryStat& then, const EntryStat& now);
// Same for whole subtrees (as walk_tree returns them).
std::string same_tree(const std::vector<EntryStat>& then, const std::vector<EntryStat>& now);

}  // namespace review
