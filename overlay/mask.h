// Step 2b of the mount plan (overlay/mounts.h): hidden paths missing on the
// host stay missing inside while the command runs. Nothing can be mounted
// over a path that does not exist, and an overlay's lowest layer is the live
// real tree, so a secret made on the host during the run (`aws configure` in
// another terminal) would show through. The mask is a small tmpfs lower
// layer just above the real tree: a whiteout at the first missing component
// of each such path, its existing parents as dirs with the real ones' mode,
// times and user.* xattrs. The session's own layers sit above it (what the command makes
// there is its own, and stays visible); capture never sees it.
#pragma once
#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace overlay {

// The mask for one overlay over the real dir `real` (an fd, O_PATH will
// do): `rels` are the missing hidden paths, relative to that dir. A path
// whose existing part leads through a symlink or a non-dir, or through a dir
// another user owns (or one with user.* xattrs, on a tmpfs that takes
// none), gets no whiteout (a symlink's target is masked under
// its own spelling, which the plan adds). Returns a detached, read-only
// tmpfs mount, or an invalid fd when nothing needs masking.
base::Result<base::Fd> build_mask(int real, const std::vector<std::string>& rels);

// The paths of `missing` (absolute) that belong to the overlay on `root`,
// relative to it: within it, and not within a deeper overlay root of
// `roots` (the target inside a scratch root has its own). Pure.
std::vector<std::string> mask_rels(const std::string& root, const std::vector<std::string>& roots,
                                   const std::vector<std::string>& missing);

}  // namespace overlay
