// Remove a tree the caller owns, even where the kernel (overlay's work/work)
// or the sandboxed program left mode-000 dirs: as owner we may chmod them.
// One remover: review::remove_tree_at (helper/base/fs/beneath.h), which never
// follows a symlink nor enters another mount; session::remove_tree (an owner
// user namespace) is the fallback for what it cannot remove.
#pragma once
#include <string>

#include "helper/base/result.h"

base::Result<void> remove_tree_fast(const std::string& path);
