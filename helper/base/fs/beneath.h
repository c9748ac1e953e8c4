// Safe path resolution beneath a target root: every apply/undo filesystem
// operation starts from a directory fd obtained here, then acts on a single
// final name with a *at() call that does not follow symlinks.
#pragma once
#include <string>
#include <string_view>
#include <utility>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace review {

// Pure: a relative path that can only name something beneath the root: not
// empty or absolute, no empty, "." or ".." components, no NUL byte, and no
// component longer than NAME_MAX.
bool safe_relpath(std::string_view p);

// Pure: "a/b/c" -> {"a/b", "c"}; "c" -> {"", "c"}.
std::pair<std::string, std::string> split_parent(const std::string& p);

// Open `rel` (empty: the root itself) beneath `root` with openat2(
// RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|RESOLVE_NO_MAGICLINKS|RESOLVE_NO_XDEV),
// or, on kernels without openat2, a component-by-component O_NOFOLLOW walk
// that checks each step stays on the root's mount. A symlink anywhere on the
// way (the last component included) fails with ELOOP, a mount crossing with
// EXDEV; O_PATH|O_NOFOLLOW on a final symlink returns the link itself.
base::Result<base::Fd> open_beneath(int root, const std::string& rel, int flags, unsigned mode = 0);
base::Result<base::Fd> open_dir_beneath(int root, const std::string& rel);

// Force the fallback walk (tests; LAYOVER_NO_OPENAT2=1 does the same).
void set_force_fallback(bool on);

// "/proc/self/fd/N": names an O_PATH fd's inode for calls that have no
// fd-based form (xattrs on O_PATH fds).
std::string proc_fd_path(int fd);

// Whether the directory `name` in `dirfd` is on another mount than `dirfd`
// (by mount id, so a bind mount of the same filesystem counts too).
base::Result<bool> crosses_mount_at(int dirfd, const std::string& name);

// Remove `name` in `dirfd` and, if a directory, everything below it. Never
// follows a symlink and never enters another mount (a bind mount of the
// same filesystem included); directories without write/search permission
// (our own) are opened up first.
base::Result<void> remove_tree_at(int dirfd, const std::string& name);

}  // namespace review
