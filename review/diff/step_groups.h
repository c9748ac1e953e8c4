// Per-step grouping of `layover diff` and the exit prompt's diff
// (docs/history.md "Grouping by step"): when a patch carries more than one
// step record, each file goes under the last step that touched it (or a dir
// above it), oldest step first, each group after a header line that git
// apply ignores: "# step N: LABEL" (the label escaped, always one line).
#pragma once
#include <string>
#include <vector>

#include "helper/store/layers/steps.h"

namespace review {

struct StepGroup {
    std::string header;         // "# step 3: make\n"
    std::vector<size_t> files;  // indexes into the file list, in its order
};

// Pure. Empty when there is at most one record (nothing to group by).
std::vector<StepGroup> group_by_step(const std::vector<steps::Record>& records, const std::vector<std::string>& paths);

}  // namespace review
