// Revert of one step of a kept session (docs/history.md): a new step on top
// holding the inverse of step n, computed against the view just before n.
#pragma once
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "helper/store/layers/steps.h"

namespace steps {

// A path of step n that a later step (or the live upper: 0) touched too.
struct Clash {
    std::string path;
    std::vector<int> by;
};

// Step n's paths (against the view before it, as it is now) that a later
// step or the live upper touched: the same path, or one under a dir either
// side added, deleted or replaced. Any entry the live upper holds at one of
// n's paths counts (it lies above the inverse). Later steps' records are
// used, their layers walked where a record is missing.
base::Result<std::vector<Clash>> revert_clashes(const std::string& session_dir, int n, const std::string& target);

// Pure: the clashes of `mine` (a step's paths, sorted) with one later
// layer's `theirs`, added to *out under `by`.
void find_clashes(const std::vector<Touched>& mine, const std::vector<Touched>& theirs, int by,
                  std::vector<Clash>* out);

// The inverse of step n, as a layer over the current top step, into `out`
// (made here): for each of n's paths, a whiteout where n added it, else the
// entry as the view before n shows it (opaque for a dir n deleted or
// replaced; a dir n only changed in mode gets its old mode and xattrs).
// Parent dirs take the current view's attributes. Returns n's paths.
base::Result<std::vector<Touched>> build_inverse(const std::string& session_dir, int n, const std::string& target,
                                                 const std::string& out);

}  // namespace steps
