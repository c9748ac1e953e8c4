// Looking at one entry for the scan (capture/scan/entry/look.h).
#include "capture/scan/entry/look.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "capture/scan/entry/xattr.h"
#include "helper/base/text.h"

namespace capture {

using base::Result;

namespace {

// O_NOATIME for a regular file this process owns: the scan's and the
// patch's reads are not accesses, and the flag spares the kernel's atime
// check on every read (touch_atime, ~0.8% of a 10,000-file save's CPU;
// docs/performance.md, "Save, round 9"). Only an owner may ask (EPERM
// otherwise, and then the open is tried again without it).
int noatime_if_mine(uint32_t uid) {
    static const uid_t me = ::geteuid();
    return uid == me ? O_NOATIME : 0;
}

std::atomic<bool> noatime_refused{false};

int open_file_at(int dirfd, const char* name, int flags) {
    int fd = ::openat(dirfd, name, flags);
    if (fd < 0 && errno == EPERM && (flags & O_NOATIME)) {
        noatime_refused = true;
        fd = ::openat(dirfd, name, flags & ~O_NOATIME);
    }
    return fd;
}

// light: an upper regular file with nothing below it, for status: its
// xattrs matter only in the zero-size whiteout form, so skip opening it.
// Open first, stat the open fd: one path lookup instead of two. Only for
// upper entries that getdents typed as a file or dir: an upper layer holds
// no devices but overlayfs's 0/0 whiteouts, which fail to open, so a race
// cannot make this open a device. False: use the stat-first path.
bool open_first(int dirfd, const std::string& name, unsigned char dtype, unsigned mask, Seen* s) {
    // An upper file is the session owner's: O_NOATIME until refused once.
    int extra = dtype == DT_DIR ? O_DIRECTORY : noatime_refused ? 0 : O_NOATIME;
    int fd = open_file_at(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | extra);
    if (fd < 0) return false;
    s->fd.reset(fd);
    uint32_t want = dtype == DT_DIR ? S_IFDIR : S_IFREG;
    if (::statx(fd, "", AT_EMPTY_PATH, mask, &s->st) != 0 || (s->st.stx_mode & S_IFMT) != want) {
        s->fd.reset();
        return false;
    }
    return true;
}

}  // namespace

// defer: a regular file (upper: of size > 0, which cannot be a whiteout)
// is only stat'ed; complete() opens it and reads its xattrs when the
// verdict needs them. A real file that is opened (with_base: to be
// fingerprinted) still waits for complete() for its xattrs.
// open_anyway: a deferred upper file is opened all the same (its stat
// taken on the fd), for the content reader; its xattrs still wait.
Result<Seen> look(int dirfd, const std::string& name, const std::string& path, bool upper, bool defer,
                  unsigned char dtype, bool open_anyway) {
    Seen s;
    // Built only for an error: escaping every path up front was a measurable cost.
    auto where = [&] { return (upper ? "upper entry " : "real entry ") + base::display_path(path); };
    unsigned mask = STATX_BASIC_STATS | STATX_BTIME;
    bool opened = upper && (dtype == DT_DIR || ((!defer || open_anyway) && dtype == DT_REG)) &&
                  open_first(dirfd, name, dtype, mask, &s);
    if (!opened && ::statx(dirfd, name.c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, mask, &s.st) != 0) {
        if (errno == ENOENT) return s;  // gone (a running session) or absent below
        return base::sys_error("reading " + where());
    }
    s.exists = true;
    uint32_t fmt = s.st.stx_mode & S_IFMT;
    s.side.mode = s.st.stx_mode & 07777;
    s.side.size = fmt == S_IFREG ? s.st.stx_size : 0;
    Xattrs raw;
    bool skip_open = defer && fmt == S_IFREG && (!upper || s.st.stx_size > 0);
    bool lazy_xattrs = !upper && fmt == S_IFREG;
    if (opened && !skip_open) {
        TRY(raw, read_xattrs(s.fd.get()));
    } else if (opened) {
        // open_anyway: complete() reads the xattrs if the verdict needs them
    } else if ((fmt == S_IFDIR || fmt == S_IFREG) && !skip_open) {
        int flags = O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK |
                    (fmt == S_IFDIR ? O_DIRECTORY : noatime_if_mine(s.st.stx_uid));
        int fd = open_file_at(dirfd, name.c_str(), flags | O_CLOEXEC);
        if (fd < 0)
            return base::error("cannot read " + where() + ": " + base::sys_error("open").message +
                               "; the session cannot be captured until it is readable");
        s.fd.reset(fd);
        struct stat check;
        if (::fstat(fd, &check) != 0 || (check.st_mode & S_IFMT) != fmt)
            return base::error("reading " + where() + ": it changed while being read; try again");
        if (!lazy_xattrs) {
            TRY(raw, read_xattrs(fd));
        }
    } else if (fmt == S_IFLNK) {
        std::string t(static_cast<size_t>(s.st.stx_size) + 1, '\0');
        for (;;) {
            ssize_t n = ::readlinkat(dirfd, name.c_str(), t.data(), t.size());
            if (n < 0) return base::sys_error("reading link " + where());
            if (static_cast<size_t>(n) < t.size()) {
                t.resize(static_cast<size_t>(n));
                break;
            }
            t.resize(t.size() * 2);
        }
        s.side.link_target = std::move(t);
    }
    if (upper) {
        OverlayMarks marks = overlay_marks(raw);
        if (!marks.unsupported.empty())
            return base::error("upper entry " + base::display_path(path) + " carries " + marks.unsupported +
                               ", an overlayfs feature layover does not use; this session was not made by layover");
        uint64_t rdev = (static_cast<uint64_t>(s.st.stx_rdev_major) << 32) | s.st.stx_rdev_minor;
        s.side.type = upper_type(s.st.stx_mode, rdev, s.st.stx_size, marks);
    } else {
        s.side.type = lower_type(s.st.stx_mode);
    }
    s.side.xattrs = user_xattrs(raw, upper);
    s.full = !(fmt == S_IFREG && (skip_open || lazy_xattrs));
    return s;
}

// A deferred regular file (look()): open it (once), check it is still the
// file that was stat'ed, and read its xattrs.
Result<void> complete(int dirfd, const std::string& name, const std::string& path, bool upper, Seen* s) {
    if (s->full) return base::Ok();
    auto where = [&] { return (upper ? "upper entry " : "real entry ") + base::display_path(path); };
    if (!s->fd.valid()) {
        int fd =
            open_file_at(dirfd, name.c_str(),
                         O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC | noatime_if_mine(s->st.stx_uid));
        if (fd < 0)
            return base::error("cannot read " + where() + ": " + base::sys_error("open").message +
                               "; the session cannot be captured until it is readable");
        s->fd.reset(fd);
        struct stat check;
        if (::fstat(fd, &check) != 0 || !S_ISREG(check.st_mode) || check.st_ino != s->st.stx_ino)
            return base::error("reading " + where() + ": it changed while being read; try again");
    }
    TRY(Xattrs raw, read_xattrs(s->fd.get()));
    if (upper) {
        OverlayMarks marks = overlay_marks(raw);
        if (!marks.unsupported.empty())
            return base::error("upper entry " + base::display_path(path) + " carries " + marks.unsupported +
                               ", an overlayfs feature layover does not use; this session was not made by layover");
    }
    s->side.xattrs = user_xattrs(raw, upper);
    s->full = true;
    return base::Ok();
}

}  // namespace capture
