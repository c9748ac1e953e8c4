// Copy a directory tree fd-relatively, as `cp -a` would within one user's
// permissions: dirs, regular files (copy_file_range), symlinks, fifos; modes,
// mtimes and user.* xattrs. Never follows a symlink; refuses (EXDEV) a tree
// that holds another mount, or a device or socket. Used to emulate a
// directory rename the overlay refuses (helper/sandbox/rename_worker.cc).
#pragma once
#include <string>

#include "helper/base/result.h"

namespace base {

// Copy `from` (in from_dir) to the new name `to` (in to_dir), which must not
// exist. On failure, what was copied is removed again.
Result<void> copy_tree(int from_dir, const std::string& from, int to_dir, const std::string& to);

// Errors carry the errno of the failing call (Result's message only).
int last_copy_errno();

}  // namespace base
