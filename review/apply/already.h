// Changes the target already has as the patch makes them: the same patch
// applied a second time, or the same edit made by hand. They are no
// conflict and nothing is written for them (before the newuser10 pass a
// second apply listed an added file holding the patch's very bytes as
// "exists on the target now").
#pragma once
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"
#include "review/apply/plan.h"

namespace review {

// Items with conflicts whose real entry already is what the patch makes: a
// deletion of what is gone; an added or modified regular file holding the
// patch's bytes with its permission bits (the patch setting no xattrs); a
// symlink with its target. They leave `items`, their paths go to *already.
// Not for an undo patch, a file chosen by hunk, or one with another name in
// the patch (a hard link).
base::Result<void> drop_already_applied(int root, const capture::Patch& patch, const ApplyOptions& opts,
                                        std::vector<PlanItem>& items, std::vector<std::string>* already);

}  // namespace review
