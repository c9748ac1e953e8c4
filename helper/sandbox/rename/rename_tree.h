// The fallback of a directory rename the overlay refused with EXDEV (an
// unprivileged overlay has no redirect_dir): what coreutils mv does, done
// fd-relatively in the rename worker, inside the sandbox's own view and
// with its rights only. Every error carries the errno the task gets.
#pragma once
#include <string>

#include "helper/base/result.h"

namespace rename_tree {

// Move oldparent/oldname (a directory) to newparent/newname by copying the
// tree to a temporary name in newparent, renaming that (a new, upper-only
// directory the overlay moves) onto newname with flags' RENAME_NOREPLACE,
// then removing the old tree. EXDEV, with nothing changed, when it cannot
// be done faithfully: not an overlay, another mount, a mount point inside,
// a directory the task could not empty, a tree over 2,000 levels deep.
base::Result<void> move_by_copy(int oldparent, const std::string& oldname, int newparent, const std::string& newname,
                                unsigned flags, const std::string& temp);

// Copy the contents and metadata (modes, times, user xattrs, symlinks,
// hard links within the tree) of the directory src into the empty dst.
// Never follows a symlink; stays on src's mount.
base::Result<void> copy_tree(int src, int dst);

// Remove everything below the directory dir (on one mount), making our own
// directories writable where needed, as rm -rf would.
base::Result<void> empty_tree(int dir);

// The directory newparent/temp (never a symlink) removed with what it holds,
// as far as it can be: a copy of move_by_copy's that failed, or the one a
// worker that died mid-copy left (removed by its successor, through the
// overlay, before the call gets EXDEV; docs/security.md, "Directory renames").
void drop_temp(int newparent, const std::string& temp);

}  // namespace rename_tree
