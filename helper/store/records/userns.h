// Enter a fresh user namespace mapping root to the caller, so the caller's
// own files are fully accessible (CAP_DAC_OVERRIDE, CAP_FOWNER) whatever
// mode the sandboxed program gave them. Used by capture's walk, discard and
// remove_tree. Must be called while single-threaded; affects the caller.
#pragma once
#include <string>

#include "helper/base/result.h"

namespace userns {

// Pure: the one-line map "INSIDE OUTSIDE 1\n" written to uid_map/gid_map.
std::string one_line_map(unsigned inside, unsigned outside);

// unshare(CLONE_NEWUSER), then setgroups=deny and the maps 0 -> caller.
base::Result<void> enter_owner_ns();

// Write the maps of the calling process's (just unshared) user namespace:
// "deny" to setgroups first (required since Linux 3.19 before an
// unprivileged gid_map write), then uid_map and gid_map.
base::Result<void> write_self_maps(unsigned inside_uid, unsigned outside_uid, unsigned inside_gid,
                                   unsigned outside_gid);

// A user-facing explanation for why unshare(CLONE_NEWUSER) failed, with the fix.
std::string explain_userns_failure(int err);

}  // namespace userns
