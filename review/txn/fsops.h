// Small fd-relative filesystem helpers shared by staging, commit and
// restore. Every call acts on one name inside an already-safe directory fd
// and never follows a symlink.
#pragma once
#include <sys/stat.h>

#include <cstdint>
#include <map>
#include <string>

#include "capture/scan/entry/change.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "review/txn/txn.h"

namespace review {

capture::Type type_of_mode(uint32_t st_mode);
int64_t ns_of(const struct timespec& ts);
struct timespec timespec_of(int64_t ns);  // the inverse (pure; pre-1970 times too)

// lstat of `name` in dirfd; exists=false on ENOENT.
base::Result<EntryStat> stat_at(int dirfd, const std::string& name);
EntryStat entry_stat(const struct stat& st, const std::string& path);

// user.* xattrs of the inode behind an fd (O_PATH fds work: through
// /proc/self/fd/N, whose magic link the non-l xattr calls follow).
base::Result<std::map<std::string, std::string>> get_user_xattrs(int fd);
// Make the inode's user.* xattrs exactly `want` (others removed). `fresh`:
// the inode was just created by us (O_EXCL), so it has no user.* xattrs to
// list or remove.
base::Result<void> set_user_xattrs(int fd, const std::map<std::string, std::string>& want, bool fresh = false);
// Copy POSIX ACLs (system.posix_acl_access, and _default for dirs) from one
// inode to another; absent ACLs are fine.
base::Result<void> copy_acls(int from_fd, int to_fd);
// mode (permission bits only: suid/sgid/sticky are never set) and mtime.
// `special`: setuid/setgid/sticky bits to set as well (callers pass only
// bits the entry already had, or an original's own when restoring it).
base::Result<void> set_mode_mtime(int fd, uint32_t mode, int64_t mtime_ns, bool set_mode = true, uint32_t special = 0);

// Copy all data of in_fd into out_fd from offset 0 and truncate out_fd to it.
base::Result<void> copy_data(int in_fd, int out_fd);

// renameat2 (flags RENAME_NOREPLACE / RENAME_EXCHANGE). A directory that
// moves to another parent must be writable by its owner (the kernel rewrites
// its ".." entry): where that fails with EACCES for one of ours that is not
// (0555, 0000), the call is retried with u+w added for the moment and the
// modes put back, so an apply, undo or rollback moves it like any other.
// Returns -1 with errno set, as renameat2.
int renameat2_any_mode(int from_dir, const std::string& from, int to_dir, const std::string& to, unsigned flags);
// renameat2_any_mode as a Result naming `what`.
base::Result<void> rename2(int from_dir, const std::string& from, int to_dir, const std::string& to, unsigned flags,
                           const std::string& what);

// Directory fds beneath the root, cached by relative path. At most `max`
// (kMax unless given) stay open: the least recently used half is closed when
// it is full, so an fd returned stays valid for at least the next max / 2
// calls of get() (callers hold one or two at a time), until clear().
class DirCache {
public:
    static constexpr size_t kMax = 256;
    explicit DirCache(int root, size_t max = kMax) : root_(root), max_(max < 2 ? 2 : max) {}
    base::Result<int> get(const std::string& rel);
    void clear() { cache_.clear(); }
    // The fd cached for rel, or -1: never opens anything.
    int cached(const std::string& rel) const {
        auto it = cache_.find(rel);
        return it == cache_.end() ? -1 : it->second.fd.get();
    }

private:
    struct Entry {
        base::Fd fd;
        uint64_t used = 0;
    };
    int root_;
    size_t max_;
    uint64_t tick_ = 0;
    std::map<std::string, Entry> cache_;
};

// How many dir fds apply's staging may keep open (DirCache's max): half the
// open-file limit, raised to its hard limit for it (up to 2^20), never below
// kMax nor above 2^17. Each dir staging wrote into stays reachable through
// the fd it used, for a rollback after the dir was moved out of the target
// (found by attack22: past 256 dirs the first ones' fds were closed, and a
// staged copy stayed in such a dir).
size_t staging_dir_budget();

// A fresh random token (lowercase hex), for ids and staging names.
std::string random_token(size_t bytes);
std::string now_rfc3339();

}  // namespace review
