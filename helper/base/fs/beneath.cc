#include "helper/base/fs/beneath.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <linux/openat2.h>
#include <vector>

#include "helper/base/dir.h"

namespace review {
namespace {

bool g_force_fallback = false;

bool fallback_forced() {
    if (g_force_fallback) return true;
    const char* e = std::getenv("LAYOVER_NO_OPENAT2");
    return e && std::strcmp(e, "1") == 0;
}

// -1: unknown, 0: missing (ENOSYS), 1: works.
int g_openat2 = -1;

long sys_openat2(int dirfd, const char* path, open_how* how) {
    return ::syscall(SYS_openat2, dirfd, path, how, sizeof *how);
}

// The mount of `name` in `dirfd` ("" with AT_EMPTY_PATH: dirfd itself): its
// mount id, or its device on kernels without STATX_MNT_ID.
base::Result<uint64_t> mount_of(int dirfd, const char* name, int flags) {
    struct statx sx {};
    if (::statx(dirfd, name, flags | AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &sx) != 0)
        return base::sys_error(*name ? std::string("statx ") + name : std::string("statx"));
    if (!(sx.stx_mask & STATX_MNT_ID)) return static_cast<uint64_t>(sx.stx_dev_major) << 32 | sx.stx_dev_minor;
    return static_cast<uint64_t>(sx.stx_mnt_id);
}

base::Result<uint64_t> mount_id(int fd) { return mount_of(fd, "", AT_EMPTY_PATH); }

base::Result<base::Fd> walk_fallback(int root, const std::string& rel, int flags, unsigned mode) {
    TRY(uint64_t root_mnt, mount_id(root));
    base::Fd cur(::fcntl(root, F_DUPFD_CLOEXEC, 0));
    if (!cur.valid()) return base::sys_error("dup");
    size_t start = 0;
    for (;;) {
        size_t slash = rel.find('/', start);
        std::string comp = rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        bool last = slash == std::string::npos;
        int f = last ? (flags | O_NOFOLLOW) : (O_PATH | O_DIRECTORY | O_NOFOLLOW);
        int fd = ::openat(cur.get(), comp.c_str(), f | O_CLOEXEC, mode);
        if (fd < 0) {
            // A symlink met with O_DIRECTORY|O_NOFOLLOW reports ENOTDIR: say ELOOP, as openat2 does.
            int err = errno;
            if (err == ENOTDIR || err == ELOOP) {
                struct stat st {};
                if (::fstatat(cur.get(), comp.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
                    err = ELOOP;
            }
            return base::sys_error("open " + rel, err);
        }
        base::Fd next(fd);
        struct stat st {};
        if (::fstat(next.get(), &st) != 0) return base::sys_error("stat " + rel);
        bool is_link = S_ISLNK(st.st_mode);
        if (is_link && !(last && (flags & O_PATH))) return base::sys_error("open " + rel, ELOOP);
        if (!is_link) {
            TRY(uint64_t mnt, mount_id(next.get()));
            if (mnt != root_mnt) return base::sys_error("open " + rel, EXDEV);
        }
        cur = std::move(next);
        if (last) return cur;
        start = slash + 1;
    }
}

}  // namespace

bool safe_relpath(std::string_view p) {
    if (p.empty() || p[0] == '/') return false;
    size_t start = 0;
    for (;;) {
        size_t slash = p.find('/', start);
        std::string_view comp =
            p.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
        if (comp.empty() || comp == "." || comp == ".." || comp.size() > NAME_MAX) return false;
        if (comp.find('\0') != std::string_view::npos) return false;
        if (slash == std::string_view::npos) return true;
        start = slash + 1;
    }
}

std::pair<std::string, std::string> split_parent(const std::string& p) {
    size_t slash = p.rfind('/');
    if (slash == std::string::npos) return {"", p};
    return {p.substr(0, slash), p.substr(slash + 1)};
}

void set_force_fallback(bool on) { g_force_fallback = on; }

std::string proc_fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

namespace {
constexpr size_t kPathPiece = 4000;  // below PATH_MAX (4096), with room for the NUL
}  // namespace

base::Result<base::Fd> open_beneath(int root, const std::string& rel, int flags, unsigned mode) {
    if (rel.empty()) {
        int fd = ::openat(root, ".", flags | O_CLOEXEC, mode);
        if (fd < 0) return base::sys_error("open target root");
        return base::Fd(fd);
    }
    if (!safe_relpath(rel)) return base::sys_error("open " + rel + " (unsafe name)", EINVAL);
    // A path longer than the kernel takes in one call (PATH_MAX, e.g. a
    // 5,000-deep tree) is opened in pieces, each beneath the last, so every
    // rule holds for every piece.
    if (rel.size() >= kPathPiece) {
        size_t cut = rel.rfind('/', kPathPiece - 1);
        if (cut == std::string::npos || cut == 0) return base::sys_error("open " + rel, ENAMETOOLONG);
        TRY(base::Fd mid, open_beneath(root, rel.substr(0, cut), O_PATH | O_DIRECTORY));
        return open_beneath(mid.get(), rel.substr(cut + 1), flags, mode);
    }
    if (!fallback_forced() && g_openat2 != 0) {
        open_how how{};
        how.flags = static_cast<uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW);
        how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
        for (;;) {
            long fd = sys_openat2(root, rel.c_str(), &how);
            if (fd >= 0) {
                g_openat2 = 1;
                return base::Fd(static_cast<int>(fd));
            }
            if (errno == EAGAIN || errno == EINTR) continue;                  // a concurrent rename: retry
            if (errno == ENOSYS || (errno == EPERM && g_openat2 < 0)) break;  // seccomp filters report EPERM
            int err = errno;
            if (err == ENOTDIR && !(flags & O_PATH)) {
                // O_DIRECTORY|O_NOFOLLOW on a final symlink says ENOTDIR: report it as the symlink it is.
                auto link = open_beneath(root, rel, O_PATH | O_NOFOLLOW);
                struct stat st {};
                if (link.ok() && ::fstat(link->get(), &st) == 0 && S_ISLNK(st.st_mode)) err = ELOOP;
            }
            return base::sys_error("open " + rel, err);
        }
        g_openat2 = 0;
    }
    return walk_fallback(root, rel, flags, mode);
}

base::Result<base::Fd> open_dir_beneath(int root, const std::string& rel) {
    return open_beneath(root, rel, O_RDONLY | O_DIRECTORY);
}

base::Result<bool> crosses_mount_at(int dirfd, const std::string& name) {
    TRY(uint64_t here, mount_id(dirfd));
    TRY(uint64_t there, mount_of(dirfd, name.c_str(), 0));
    return here != there;
}

namespace {

// One dir of a tree being removed, and what is left to remove in it.
struct Level {
    base::Fd fd;  // closed past kOpenLevels below the deepest; reopened by ".." and checked
    dev_t dev = 0;
    ino_t ino = 0;
    std::string name;  // in the level above
    std::vector<base::DirEntry> names;
    size_t next = 0;
};

// A tree may nest deeper than the fd limit (and than any stack: hence the
// loop, not recursion), so only the deepest levels keep their dirs open.
constexpr size_t kOpenLevels = 64;

base::Result<Level> enter(int dirfd, const std::string& name, const struct stat& st) {
    TRY(bool other, crosses_mount_at(dirfd, name));
    if (other) return base::sys_error("remove " + name, EXDEV);
    if ((st.st_mode & 0700) != 0700) ::fchmodat(dirfd, name.c_str(), (st.st_mode & 07777) | 0700, AT_SYMLINK_NOFOLLOW);
    Level l;
    l.fd = base::Fd(::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat now {};
    if (!l.fd.valid() || ::fstat(l.fd.get(), &now) != 0) return base::sys_error("open " + name);
    l.dev = now.st_dev;
    l.ino = now.st_ino;
    l.name = name;
    auto names = base::list_dir(l.fd.get());
    if (!names) return names.error().context(name);
    l.names = std::move(names.value());
    return l;
}

}  // namespace

base::Result<void> remove_tree_at(int dirfd, const std::string& name) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return base::Ok();
        return base::sys_error("stat " + name);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (::unlinkat(dirfd, name.c_str(), 0) != 0 && errno != ENOENT) return base::sys_error("remove " + name);
        return base::Ok();
    }
    std::vector<Level> path;
    TRY(Level top, enter(dirfd, name, st));
    path.push_back(std::move(top));
    while (!path.empty()) {
        Level& l = path.back();
        if (l.next < l.names.size()) {
            std::string n = l.names[l.next++].name;
            struct stat s {};
            if (::fstatat(l.fd.get(), n.c_str(), &s, AT_SYMLINK_NOFOLLOW) != 0) {
                if (errno == ENOENT) continue;
                return base::sys_error("stat " + n).context(name);
            }
            if (!S_ISDIR(s.st_mode)) {
                if (::unlinkat(l.fd.get(), n.c_str(), 0) != 0 && errno != ENOENT)
                    return base::sys_error("remove " + n).context(name);
                continue;
            }
            auto sub = enter(l.fd.get(), n, s);
            if (!sub) return sub.error().context(name);
            path.push_back(std::move(sub.value()));  // l is gone from here on
            if (path.size() > kOpenLevels) path[path.size() - kOpenLevels - 1].fd.reset();
            continue;
        }
        // Emptied: removed from the level above, reopened from it when
        // closed, and only when it is still the dir we listed.
        Level done = std::move(path.back());
        path.pop_back();
        int parent = dirfd;
        if (!path.empty()) {
            Level& p = path.back();
            if (!p.fd.valid()) {
                base::Fd up(::openat(done.fd.get(), "..", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
                struct stat us {};
                if (!up.valid() || ::fstat(up.get(), &us) != 0 || us.st_dev != p.dev || us.st_ino != p.ino)
                    return base::error("remove " + name + ": a dir in it was moved while it was being removed");
                p.fd = std::move(up);
            }
            parent = p.fd.get();
        }
        // Our fd to the dir stays open across its rmdir: the kernel frees the
        // dir's inode and block (on a file system mounted `discard`, a
        // synchronous discard) at the last reference, which is then our
        // close, not the rmdir, which holds the parent's lock until its
        // reference is dropped. A parent shared with others (STATE/deleting/,
        // which the next run's exit renames into) is not held meanwhile.
        if (::unlinkat(parent, done.name.c_str(), AT_REMOVEDIR) != 0 && errno != ENOENT)
            return base::sys_error("remove " + done.name).context(name);
        done.fd.reset();
    }
    return base::Ok();
}

}  // namespace review
