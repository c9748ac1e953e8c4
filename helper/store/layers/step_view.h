// A session's view at the end of one step, read-only (docs/history.md): what
// `status --steps N..M` and `diff --steps` compare the steps' own changes with.
#pragma once
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace steps {

// Steps n..1 over the target (n >= 1) as a read-only overlay, given as an fd
// of its root. A forked child mounts it detached (fsmount: no mountpoint) in
// a mount namespace of its own and passes the fd back; the mount lives as
// long as the fd. Call it as the session's owner (capture::in_owner_ns or
// as_owner_here): the child needs the owner user namespace's root.
// With `live`, the live upper on top (n may then be 0): the session's view.
base::Result<base::Fd> open_view(const std::string& session_dir, int n, const std::string& target, bool live = false);

// compare (docs/history.md): for each path the session at `against` changed
// and session `dir` did not, the real tree's state of it (copied; a whiteout
// where the real tree has nothing), as one layer. Under `dir`'s layers (the
// live upper, steps N..first) and over `against`'s view (open_view with
// live) as the lower, it gives the changes from that session's final view
// to this one's. Both stacks are read in place (layers::lookup). Made in
// SESSION/flat.PID (the dir of `dir`); remove it with remove_flat.
base::Result<std::string> compare_upper(const std::string& dir, const std::string& against, const std::string& target);

}  // namespace steps
