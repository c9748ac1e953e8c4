// A small detached tmpfs, made by the new mount API (no /proc/self needed:
// setup has no pid in the sandbox's /proc): mode 0755, nosuid, nodev,
// noexec. The covers of hidden paths (overlay/hide.cc) and the masks of
// missing ones (overlay/mask.cc). `what` names it in errors.
#pragma once
#include <cstddef>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace overlay {

base::Result<base::Fd> detached_tmpfs(const char* size, size_t inodes, const std::string& what);
// Read-only, once what it holds is made.
base::Result<void> make_read_only(const base::Fd& mount, const std::string& what);

}  // namespace overlay
