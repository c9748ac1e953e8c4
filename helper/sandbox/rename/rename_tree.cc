#include "helper/sandbox/rename/rename_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <utility>
#include <vector>

#include "helper/base/dir.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"

namespace rename_tree {

namespace {

constexpr int kDirFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

// Levels below the moved directory the copy goes to. Each holds its path
// while the copy is below it, so the worker's memory grows with the square
// of the depth (247 MB at 9,000 levels, which the command makes in seconds;
// bound only by RLIMIT_NOFILE), outside the sandbox's limits (attack20).
// Past it: EXDEV, and mv copies by itself, inside them.
constexpr int kMaxCopyDepth = 2000;

base::Error cannot(const std::string& why) { return base::Error{"cannot emulate the rename: " + why, EXDEV}; }

base::Result<uint64_t> mount_id(int fd) {
    struct statx stx;
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &stx) != 0) return base::sys_error("statx");
    if (!(stx.stx_mask & STATX_MNT_ID)) return cannot("no mount id");
    return stx.stx_mnt_id;
}

base::Result<base::Fd> open_dir(int parent, const std::string& name) { return base::open_at(parent, name, kDirFlags); }

// The old tree is removed after the copy: each of its directories must be
// one the task could empty (writable, or its own to make so).
bool can_empty(int dir, const struct stat& st) {
    return st.st_uid == ::geteuid() || ::faccessat(dir, "", W_OK | X_OK, AT_EMPTY_PATH | AT_EACCESS) == 0;
}

// Every user xattr; others (security.*, trusted.*) are not ours to set.
base::Result<void> copy_xattrs(int src, int dst) {
    std::vector<char> names(65536), value(65536);
    ssize_t n = ::flistxattr(src, names.data(), names.size());
    if (n < 0) return errno == ENOTSUP ? base::Ok() : base::sys_error("listing xattrs");
    for (ssize_t at = 0; at < n; at += static_cast<ssize_t>(std::string(names.data() + at).size()) + 1) {
        std::string name(names.data() + at);
        if (name.rfind("user.", 0) != 0) continue;
        ssize_t len = ::fgetxattr(src, name.c_str(), value.data(), value.size());
        if (len < 0) return base::sys_error("reading xattr " + base::display_path(name));
        if (::fsetxattr(dst, name.c_str(), value.data(), static_cast<size_t>(len), 0) != 0)
            return base::sys_error("setting xattr " + base::display_path(name));
    }
    return base::Ok();
}

// Modes and times last: a read-only directory was filled first, and every
// entry made in a directory moves its mtime.
base::Result<void> copy_meta(int src, int dst, const struct stat& st) {
    TRY_VOID(copy_xattrs(src, dst));
    if (::fchmod(dst, st.st_mode & 07777) != 0) return base::sys_error("chmod");
    struct timespec times[2] = {st.st_atim, st.st_mtim};
    if (::futimens(dst, times) != 0) return base::sys_error("setting times");
    return base::Ok();
}

base::Result<void> copy_bytes(int in, int out) {
    for (;;) {
        ssize_t n = ::copy_file_range(in, nullptr, out, nullptr, 1 << 30, 0);
        if (n == 0) return base::Ok();
        if (n > 0) continue;
        if (errno == EINTR) continue;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return base::sys_error("copy");
        break;  // nothing copied yet by this call: plain reads and writes from here
    }
    char buf[1 << 16];
    for (;;) {
        ssize_t n = ::read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return base::sys_error("read");
        if (n == 0) return base::Ok();
        TRY_VOID(base::write_all(out, buf, static_cast<size_t>(n)));
    }
}

class Copier {
public:
    Copier(uint64_t mnt, int root) : mnt_(mnt), root_(root) {}

    base::Result<void> dir(int src, int dst, const std::string& rel) {
        TRY(auto names, base::list_dir(src));
        for (const auto& e : names) TRY_VOID(entry(src, dst, e.name, rel + e.name));
        return base::Ok();
    }

private:
    base::Result<void> entry(int src, int dst, const std::string& name, const std::string& rel) {
        struct stat st;
        if (::fstatat(src, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return base::sys_error(rel);
        struct timespec times[2] = {st.st_atim, st.st_mtim};
        switch (st.st_mode & S_IFMT) {
            case S_IFDIR: return subdir(src, dst, name, rel, st);
            case S_IFREG: return file(src, dst, name, rel, st);
            case S_IFLNK: {
                std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
                ssize_t n = ::readlinkat(src, name.c_str(), target.data(), target.size());
                if (n < 0 || static_cast<size_t>(n) >= target.size()) return base::sys_error("readlink " + rel);
                target.resize(static_cast<size_t>(n));
                if (::symlinkat(target.c_str(), dst, name.c_str()) != 0) return base::sys_error("symlink " + rel);
                break;
            }
            default:  // fifos, sockets; device nodes fail (EPERM) as they would for mv
                if (::mknodat(dst, name.c_str(), st.st_mode & (S_IFMT | 07777), st.st_rdev) != 0)
                    return base::sys_error("mknod " + rel);
                if (::fchmodat(dst, name.c_str(), st.st_mode & 07777, 0) != 0) return base::sys_error("chmod " + rel);
        }
        if (::utimensat(dst, name.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0) return base::sys_error("times " + rel);
        return base::Ok();
    }

    base::Result<void> subdir(int src, int dst, const std::string& name, const std::string& rel,
                              const struct stat& st) {
        if (depth_ >= kMaxCopyDepth) return cannot("the tree is nested too deep");
        TRY(base::Fd from, open_dir(src, name));
        TRY(uint64_t mnt, mount_id(from.get()));
        if (mnt != mnt_) return cannot(rel + " is a mount point");
        if (!can_empty(from.get(), st)) return cannot(rel + " could not be emptied");
        if (::mkdirat(dst, name.c_str(), 0700) != 0) return base::sys_error("mkdir " + rel);
        TRY(base::Fd to, open_dir(dst, name));
        depth_++;
        auto below = dir(from.get(), to.get(), rel + "/");
        depth_--;
        if (!below) return below;
        return copy_meta(from.get(), to.get(), st);
    }

    base::Result<void> file(int src, int dst, const std::string& name, const std::string& rel, const struct stat& st) {
        if (st.st_nlink > 1) {
            auto key = std::make_pair(st.st_dev, st.st_ino);
            auto seen = links_.find(key);
            if (seen != links_.end()) {
                if (::linkat(root_, seen->second.c_str(), dst, name.c_str(), 0) != 0)
                    return base::sys_error("link " + rel);
                return base::Ok();
            }
            links_[key] = rel;
        }
        TRY_VOID(base::fault_point("rename", "open"));  // stat'ed, not yet opened (tests/integration/test_attack28.py)
        // O_NONBLOCK: the agent may have put a FIFO in its place since the
        // stat, whose open would block the worker (and every checkpoint,
        // refused while it copies) for ever; a lease breaks at once too.
        TRY(base::Fd in, base::open_at(src, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK));
        struct stat now;
        if (::fstat(in.get(), &now) != 0) return base::sys_error(rel);
        if (!S_ISREG(now.st_mode) || now.st_ino != st.st_ino || now.st_dev != st.st_dev)
            return cannot(rel + " changed while it was copied");
        TRY(base::Fd out, base::open_at(dst, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
        auto copied = copy_bytes(in.get(), out.get());
        if (!copied) return copied.error().context(rel);
        TRY_VOID(copy_meta(in.get(), out.get(), st));
        return base::fault_point("rename", "file");  // mid-copy (move_by_copy's points)
    }

    uint64_t mnt_;
    int depth_ = 0;  // of the directory being copied, below the top
    int root_;       // the copy's top, for hard links: their first name, relative to it
    std::map<std::pair<dev_t, ino_t>, std::string> links_;
};

base::Result<void> remove_entries(int dir, uint64_t mnt) {
    TRY(auto names, base::list_dir(dir));
    bool opened_up = false;
    for (const auto& e : names) {
        struct stat st;
        if (::fstatat(dir, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno == ENOENT) continue;
            return base::sys_error(e.name);
        }
        bool is_dir = S_ISDIR(st.st_mode);
        if (is_dir) {
            TRY(base::Fd sub, open_dir(dir, e.name));
            TRY(uint64_t m, mount_id(sub.get()));
            if (m != mnt) return cannot(e.name + " is a mount point");
            TRY_VOID(remove_entries(sub.get(), mnt));
        }
        int flags = is_dir ? AT_REMOVEDIR : 0;
        int rc = ::unlinkat(dir, e.name.c_str(), flags);
        if (rc != 0 && (errno == EACCES || errno == EPERM) && !opened_up) {
            // A read-only directory of ours: rm -rf makes it writable too.
            struct stat self;
            if (::fstat(dir, &self) == 0 && self.st_uid == ::geteuid()) ::fchmod(dir, (self.st_mode & 07777) | S_IRWXU);
            opened_up = true;
            rc = ::unlinkat(dir, e.name.c_str(), flags);
        }
        if (rc != 0 && errno != ENOENT) return base::sys_error("removing " + e.name);
    }
    return base::Ok();
}

base::Result<bool> is_empty_dir(int parent, const std::string& name) {
    TRY(base::Fd d, open_dir(parent, name));
    TRY(auto names, base::list_dir(d.get()));
    return names.empty();
}

}  // namespace

base::Result<void> copy_tree(int src, int dst) {
    TRY(uint64_t mnt, mount_id(src));
    TRY_VOID(Copier(mnt, dst).dir(src, dst, ""));
    struct stat st;
    if (::fstat(src, &st) != 0) return base::sys_error("stat");
    return copy_meta(src, dst, st);
}

base::Result<void> empty_tree(int dir) {
    TRY(uint64_t mnt, mount_id(dir));
    return remove_entries(dir, mnt);
}

void drop_temp(int newparent, const std::string& temp) {
    auto d = open_dir(newparent, temp);
    if (d && empty_tree(d->get())) ::unlinkat(newparent, temp.c_str(), AT_REMOVEDIR);
}

base::Result<void> move_by_copy(int oldparent, const std::string& oldname, int newparent, const std::string& newname,
                                unsigned flags, const std::string& temp) {
    if (flags & ~RENAME_NOREPLACE) return cannot("flags other than RENAME_NOREPLACE");
    TRY(base::Fd src, open_dir(oldparent, oldname));
    struct statfs fs;
    if (::fstatfs(src.get(), &fs) != 0) return base::sys_error("statfs");
    if (fs.f_type != OVERLAYFS_SUPER_MAGIC) return cannot("not an overlay");
    TRY(uint64_t mnt, mount_id(src.get()));
    TRY(uint64_t newmnt, mount_id(newparent));
    if (mnt != newmnt) return cannot("another mount");  // the kernel's own EXDEV, passed on
    struct stat old;
    if (::fstat(src.get(), &old) != 0) return base::sys_error("stat " + oldname);
    if (!can_empty(src.get(), old)) return cannot(oldname + " could not be emptied");

    // What the overlay would have checked after its EXDEV: the new name may
    // only be an empty directory (NOREPLACE: nothing), as rename(2) says.
    struct stat st;
    if (::fstatat(newparent, newname.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        if (flags & RENAME_NOREPLACE) return base::sys_error(newname, EEXIST);
        if (!S_ISDIR(st.st_mode)) return base::sys_error(newname, ENOTDIR);
        TRY(bool empty, is_empty_dir(newparent, newname));
        if (!empty) return base::sys_error(newname, ENOTEMPTY);
    } else if (errno != ENOENT) {
        return base::sys_error(newname);
    }

    // The name is the proof that the dir is the worker's, should it die
    // mid-copy (helper/store/records/rename_temps.h): exactly that name or nothing
    // (taken: the sandbox copied it from an earlier copy's; EXDEV, mv copies).
    if (::mkdirat(newparent, temp.c_str(), 0700) != 0)
        return errno == EEXIST ? cannot(temp + " exists") : base::sys_error("mkdir " + temp);
    auto copied = [&]() -> base::Result<void> {
        TRY(base::Fd dst, open_dir(newparent, temp));
        return copy_tree(src.get(), dst.get());
    }();
    if (!copied) {
        drop_temp(newparent, temp);
        return copied.error();
    }
    // Fault points (LAYOVER_FAULT=rename:POINT:N:kill, helper/base/fault.h; `file` and `open` in Copier):
    // a worker killed at each, tests/integration/test_worker2.py.
    if (auto f = base::fault_point("rename", "copied"); !f) {
        drop_temp(newparent, temp);
        return f.error();
    }
    // The copy is an upper-only directory: the overlay moves it.
    if (::renameat2(newparent, temp.c_str(), newparent, newname.c_str(), flags & RENAME_NOREPLACE) != 0) {
        auto err = base::sys_error(newname);
        drop_temp(newparent, temp);
        return err;
    }
    TRY_VOID(base::fault_point("rename", "placed"));
    TRY_VOID(remove_entries(src.get(), mnt));
    TRY_VOID(base::fault_point("rename", "emptied"));
    if (::unlinkat(oldparent, oldname.c_str(), AT_REMOVEDIR) != 0) return base::sys_error("removing " + oldname);
    return base::Ok();
}

}  // namespace rename_tree
