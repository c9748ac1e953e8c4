// A file the command renames (or links) over: the session's copy of it,
// about to be dropped by the kernel, noted first (helper/store/session/first_copies.h),
// so that the copy that replaces it is judged from when the session first
// had the path (docs/security.md, "When the copy was made"); and every name
// a rename or a link makes, so that a copy at a name none made was copied
// up there (docs/security.md, "A real file removed since").
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <linux/openat2.h>

#include "helper/base/clock.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/sandbox/rename/rename_call.h"
#include "helper/sandbox/rename/rename_notify.h"
#include "helper/store/layers/steps.h"
#include "helper/store/session/first_copies.h"
#include "helper/store/session/session.h"

namespace {

std::string proc(pid_t pid, const std::string& rest) { return "/proc/" + std::to_string(pid) + "/" + rest; }

// A scoped lookup through ".." gets EAGAIN whenever a rename or a mount
// happened anywhere on the machine meanwhile ("the caller may retry",
// openat2(2)): retried, a bounded number of times (it became EXDEV, so a
// plain rename failed on a busy machine: tests/integration/test_lead46.py).
int resolve(int dirfd, const std::string& path, uint64_t how) {
    struct open_how h {};
    h.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    h.resolve = how | RESOLVE_NO_MAGICLINKS;
    for (int tries = 0;; tries++) {
        int fd = static_cast<int>(::syscall(SYS_openat2, dirfd, path.c_str(), &h, sizeof h));
        if (fd >= 0 || (errno != EAGAIN && errno != EINTR) || tries == 4096) return fd;
    }
}

std::string link_of(const std::string& link) {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
    if (n <= 0 || static_cast<size_t>(n) >= sizeof buf || buf[0] != '/') return "";
    return std::string(buf, static_cast<size_t>(n));
}

// The dir `parent` names for the task, resolved by the kernel as its call
// will be, through symlinks and `..`: beneath its cwd or dirfd, or (an
// absolute path, a `..` above it, an absolute symlink) from its root with
// its cwd's path as /proc shows it. A /proc magic link (`/proc/self/fd/N`)
// would mean the reader's: never followed. The dir's path as the kernel
// names it (the sandbox's view, where the target sits at its own path), or
// the errno the call gets instead: what resolving it gave (the call would
// fail so too, but where the path means the reader, as `/proc/self` does),
// EXDEV where it cannot be told.
int parent_path(pid_t pid, int dirfd, const std::string& parent, base::Fd* fd, std::string* out) {
    base::Fd at;
    if (parent[0] != '/') {
        if (dirfd == AT_FDCWD) {
            at.reset(::open(proc(pid, "cwd").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        } else {
            base::Fd pidfd(task_pidfd(pid));
            if (pidfd.valid()) at.reset(static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), dirfd, 0)));
        }
        if (!at.valid()) return out_of_fds() ? ENOMEM : dirfd == AT_FDCWD ? ENOENT : EBADF;
    }
    base::Fd dir(at.valid() ? resolve(at.get(), parent, RESOLVE_BENEATH) : -1);
    if (!dir.valid() && (!at.valid() || errno == EXDEV)) {
        std::string abs = parent;
        if (at.valid()) {
            std::string base = link_of("/proc/self/fd/" + std::to_string(at.get()));
            if (base.empty()) return EXDEV;
            abs = base + "/" + parent;
        }
        base::Fd root(::open(proc(pid, "root").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (!root.valid()) return out_of_fds() ? ENOMEM : ENOENT;
        dir.reset(resolve(root.get(), abs, RESOLVE_IN_ROOT));
    }
    if (!dir.valid())
        return out_of_fds()                                                                      ? ENOMEM
               : errno == ENOENT || errno == ENOTDIR || errno == EACCES || errno == ENAMETOOLONG ? errno
                                                                                                 : EXDEV;
    *out = link_of("/proc/self/fd/" + std::to_string(dir.get()));
    if (out->empty()) return EXDEV;
    *fd = std::move(dir);
    return 0;
}

// When the live upper began (its run's start, or a checkpoint's), floored
// to the second; 0 when not known (a bound that makes every copy old).
int64_t read_live_start(const std::string& session_dir) {
    auto text = steps::layer_start(session_dir, 0);
    int64_t s = text ? base::parse_rfc3339(text.value()) : -1;
    return s > 0 ? s * 1000000000 : 0;
}

}  // namespace

void RenameService::note_copies(const std::string& session_dir, const std::string& target, int64_t since_ns) {
    session_dir_ = session_dir;
    target_ = target;
    notes_ = std::make_unique<session::Notes>(session_dir);
    // From then on: the command's calls wait in the listener's queue until
    // the supervisor's loop, which begins after this, answers them.
    (void)notes_->moves_begin(since_ns);
}

// The entry the call replaces, as the kernel will resolve it; a copy
// overlayfs made in place (marked, one link) counts from its birth, any
// other entry there (a whiteout: the copy was deleted; a file made anew, or
// moved or linked there) from when the live upper began, as the walk counts
// them (capture/scan/walk/walker_since.cc). An errno: the call is refused, as
// its entry cannot be told (EXDEV, as for a rename across mounts: `mv`
// copies instead, which the walk judges) or noted (the disk full). Else
// *at and *entry: the dir resolved and the name in it (at invalid: none,
// the call needs no note), on which the call is to act, never the path
// again (another thread could bend it since).
int RenameService::note_replaced(pid_t pid, int dirfd, const std::string& path, base::Fd* at, std::string* entry) {
    if (!notes_ || path.empty()) return 0;
    auto [parent, name] = rename_call::split(path);
    if (name.empty() || name == "." || name == ".." || name == "/") return 0;  // the call fails (EBUSY, ...)
    std::string dir;
    if (int err = parent_path(pid, dirfd, parent, at, &dir)) return err;
    *entry = name;
    std::string abs = dir == "/" ? "/" + name : dir + "/" + name;
    if (abs.size() <= target_.size() + 1 || abs.compare(0, target_.size(), target_) != 0 || abs[target_.size()] != '/')
        return 0;
    std::string rel = abs.substr(target_.size() + 1);
    if (!review::safe_relpath(rel)) return 0;
    // The name the call makes: a copy that comes there by it is another
    // path's (the walk's first_copy, file_copied_from_real).
    if (!made_.count(rel)) {
        if (!notes_->moved_to(rel)) return EXDEV;
        cache_more(rel.size());
        made_.insert(rel);
    }
    // The live upper as it is now (a checkpoint replaces it), walked beneath
    // it without following a link.
    base::Fd upper(::open(session::upper_dir(session_dir_).c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!upper.valid()) return 0;
    auto [up_parent, up_name] = review::split_parent(rel);
    auto up = review::open_dir_beneath(upper.get(), up_parent);
    struct statx st {};
    if (!up ||
        ::statx(up->get(), up_name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_BTIME | STATX_NLINK, &st) != 0 ||
        S_ISDIR(st.stx_mode))
        return 0;
    int64_t ns = -1;
    if (S_ISREG(st.stx_mode) && st.stx_nlink == 1 && (st.stx_mask & STATX_BTIME)) {
        base::Fd fd(::openat(up->get(), up_name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        struct statx again {};
        if (fd.valid() && ::statx(fd.get(), "", AT_EMPTY_PATH, STATX_BTIME, &again) == 0 &&
            again.stx_btime.tv_sec == st.stx_btime.tv_sec && again.stx_btime.tv_nsec == st.stx_btime.tv_nsec &&
            ::fgetxattr(fd.get(), "user.overlay.origin", nullptr, 0) >= 0)
            ns = base::time_ns(st.stx_btime.tv_sec, st.stx_btime.tv_nsec);
    }
    if (ns < 0) {
        // Read once per live upper (a checkpoint makes a new one, with its own start).
        struct stat up_st {};
        if (::fstat(upper.get(), &up_st) != 0 || up_st.st_ino != live_ino_) {
            live_start_ = read_live_start(session_dir_);
            live_ino_ = up_st.st_ino;
        }
        ns = live_start_;
    }
    auto it = noted_.find(rel);
    if (it != noted_.end() && it->second <= ns) return 0;
    // Not noted (the disk full): the entry stays. (Past 8 MiB of notes the
    // file says it is full, and the walk counts every copy from its layer.)
    if (!notes_->first_copy(rel, ns)) return EXDEV;
    cache_more(rel.size());
    noted_[rel] = ns;
    return 0;
}

void RenameService::cache_more(size_t bytes) {
    cached_ += bytes + 96;  // with a node's own
    if (cached_ <= kMaxCached) return;
    noted_.clear();
    made_.clear();
    cached_ = bytes + 96;
}
