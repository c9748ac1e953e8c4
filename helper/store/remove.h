// Remove a tree the caller owns, even where the kernel (overlay's work/work)
// or the sandboxed program left mode-000 dirs: as owner we may chmod them.
// Never follows symlinks and never leaves the tree's filesystem.
#pragma once
#include <string>

#include "helper/base/result.h"

base::Result<void> remove_tree_fast(const std::string& path);
