// Building a layer out of other layers and the real tree (revert's inverse
// step, compare's view of one session against another; docs/history.md).
// fd-relative, never following a symlink: the names were made by the
// sandboxed program. Run as the session's owner.
#pragma once
#include <sys/stat.h>

#include <string>

#include "helper/base/result.h"
#include "helper/store/layers/layers.h"

namespace steps {

// The user.* xattrs (overlayfs's own user.overlay.* left out), mode and times
// of `from` (stat'ed as st) onto `to`. from_layer: `from` lies in a layer
// and `to` in another, so the user's own user.overlay.X, stored escaped as
// user.overlay.overlay.X, is copied as it is.
base::Result<void> copy_attrs(int from, int to, const struct stat& st, bool from_layer = false);

// A whiteout named `name` in dir `out`.
base::Result<void> put_whiteout(int out, const std::string& name);

// `name` as `chain` shows it (f: layers::lookup(chain, name), which exists)
// into dir `out`, whole: a frozen layer's file hard-linked (frozen inodes are
// never written), the real tree's copied (bytes, mode, user xattrs, times),
// a dir made with everything that shows in it, opaque when `opaque` (so
// nothing below shows through).
base::Result<void> put_entry(const layers::Chain& chain, const layers::Found& f, const std::string& name, int out,
                             bool opaque);

}  // namespace steps
