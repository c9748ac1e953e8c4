#include "review/txn/journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "helper/base/text.h"
#include "review/txn/fsops.h"

namespace review {
namespace {

base::Result<void> ensure_dir(const std::string& path) {
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("create " + path);
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return base::sys_error(path);
    if (!S_ISDIR(st.st_mode)) return base::error(path + " is not a directory; remove it");
    return base::Ok();
}

// A filesystem whose birth time is its inode's own, set once when made.
// Not overlayfs (attack26): a dir of a lower layer reports the lower
// inode's, and its copy-up (the first entry an apply writes in it) the
// upper's, at the same st_ino: a killed apply's journal was then taken for
// another tree's and set aside, the tree left half applied. Nor FUSE, NFS
// and the like, whose servers say what they like.
bool birth_time_is_identity(int fd) {
    struct statfs sf {};
    if (::fstatfs(fd, &sf) != 0) return false;
    switch (static_cast<uint64_t>(static_cast<uint32_t>(sf.f_type))) {
        case 0xEF53:      // ext2/3/4
        case 0x58465342:  // xfs
        case 0x9123683E:  // btrfs
        case 0x01021994:  // tmpfs
        case 0xF2F52010:  // f2fs
        case 0xCA451A4E:  // bcachefs
        case 0x2FC12FC1:  // zfs
            return true;
        default: return false;
    }
}

}  // namespace

int64_t tree_birth_ns(int fd) {
    if (!birth_time_is_identity(fd)) return 0;
    struct statx sx {};
    if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) != 0 || !(sx.stx_mask & STATX_BTIME))
        return 0;
    return static_cast<int64_t>(sx.stx_btime.tv_sec) * 1000000000 + sx.stx_btime.tv_nsec;
}

std::string target_key(uint64_t dev, uint64_t ino) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%llx-%llx", static_cast<unsigned long long>(dev),
                  static_cast<unsigned long long>(ino));
    return buf;
}

base::Result<base::Fd> lock_target(const std::string& state, const std::string& key, const std::string& target) {
    std::string dir = state + "/locks";
    TRY_VOID(ensure_dir(dir));
    TRY(base::Fd fd, base::open_at(AT_FDCWD, dir + "/" + key + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW, 0600));
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return base::error("another layover apply or undo is running on " + base::display_path(target) +
                               "; wait for it to finish, then retry");
        return base::sys_error("lock " + dir);
    }
    return fd;
}

std::string journal_path(const std::string& state, const std::string& key) {
    return state + "/journal/" + key + ".json";
}

base::Result<void> write_file_durably(int dirfd, const std::string& name, const std::string& content) {
    std::string tmp = name + ".tmp-" + random_token(6);
    TRY(base::Fd fd, base::open_at(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
    auto w = base::write_all(fd.get(), content.data(), content.size());
    if (w.ok() && ::fsync(fd.get()) != 0) w = base::sys_error("fsync " + name);
    if (w.ok()) w = fd.close();
    if (w.ok() && ::renameat(dirfd, tmp.c_str(), dirfd, name.c_str()) != 0) w = base::sys_error("rename " + name);
    if (!w.ok()) {
        ::unlinkat(dirfd, tmp.c_str(), 0);
        return w;
    }
    if (::fsync(dirfd) != 0) return base::sys_error("fsync dir of " + name);
    return base::Ok();
}

base::Result<void> write_journal(const std::string& path, const Txn& t) {
    std::string dir = path.substr(0, path.rfind('/'));
    TRY_VOID(ensure_dir(dir));
    TRY(base::Fd d, base::open_at(AT_FDCWD, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    auto r = write_file_durably(d.get(), path.substr(path.rfind('/') + 1), txn_to_json(t));
    if (!r.ok()) return r.error().context("writing the journal " + path + " (check free space in the state dir)");
    return base::Ok();
}

base::Result<std::optional<Txn>> read_journal(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) return std::optional<Txn>();
        return base::sys_error("open journal " + path);
    }
    base::Fd f(fd);
    TRY(std::string text, base::read_all(f.get(), 512u << 20));
    auto t = txn_from_json(text);
    if (!t.ok()) return t.error().context("journal " + path);
    return std::optional<Txn>(std::move(t).value());
}

base::Result<void> remove_journal(const std::string& path) {
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return base::sys_error("remove journal " + path);
    std::string dir = path.substr(0, path.rfind('/'));
    int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d >= 0) {
        ::fsync(d);
        ::close(d);
    }
    return base::Ok();
}

}  // namespace review
