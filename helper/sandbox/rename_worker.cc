#include "helper/sandbox/rename_worker.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "helper/base/dir.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/fs/copy_tree.h"

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#define RENAME_EXCHANGE (1 << 1)
#endif

namespace rename_worker {

namespace {

struct Header {
    uint32_t flags, from_len, to_len;
};

// "a/b/c/" -> ("a/b", "c"); "c" -> ("", "c").
std::pair<std::string, std::string> split(std::string p) {
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    size_t slash = p.rfind('/');
    if (slash == std::string::npos) return {"", p};
    return {slash == 0 ? "/" : p.substr(0, slash), p.substr(slash + 1)};
}

// The parent dir of a path, as rename(2) resolves it (symlinks in the
// parent part are followed, in the sandbox's own view).
base::Fd parent_of(int dirfd, const std::string& parent) {
    return base::Fd(::openat(dirfd, parent.empty() ? "." : parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

// The mount an O_PATH dir fd is on (0 when unknown).
uint64_t mount_of(int fd) {
    struct statx sx;
    if (::statx(fd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) != 0 || !(sx.stx_mask & STATX_MNT_ID)) return 0;
    return sx.stx_mnt_id;
}

bool same(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

// Is `dir` the moved directory itself or below it? (rename(a, a/b) is EINVAL.)
bool inside(int dir, const struct stat& moved) {
    base::Fd cur(::openat(dir, ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
    for (int depth = 0; cur.valid() && depth < 4096; depth++) {
        struct stat st;
        if (::fstat(cur.get(), &st) != 0) return false;
        if (same(st, moved)) return true;
        base::Fd up(::openat(cur.get(), "..", O_PATH | O_DIRECTORY | O_CLOEXEC));
        struct stat ust;
        if (!up.valid() || ::fstat(up.get(), &ust) != 0 || same(ust, st)) return false;  // reached /
        cur = std::move(up);
    }
    return false;
}

bool empty_dir(int dir, const std::string& name) {
    base::Fd fd(::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!fd.valid()) return false;
    auto names = base::list_dir(fd.get());
    return names && names->empty();
}

void drop_everything() {
    ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    for (int c = 0; c <= 63; c++) ::prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    std::memset(data, 0, sizeof data);
    ::syscall(SYS_capset, &hdr, data);
}

[[noreturn]] void serve(int sock) {
    std::vector<char> buf(sizeof(Header) + 2 * 4096 + 16);
    for (;;) {
        struct iovec iov = {buf.data(), buf.size()};
        char cbuf[CMSG_SPACE(2 * sizeof(int))];
        struct msghdr msg = {};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf;
        msg.msg_controllen = sizeof cbuf;
        ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        if (n <= 0) ::_exit(0);
        int fds[2] = {-1, -1};
        for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
            if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
                std::memcpy(fds, CMSG_DATA(c), sizeof fds);
        base::Fd olddir(fds[0]), newdir(fds[1]);
        int32_t result = kContinue;
        Header h;
        if (static_cast<size_t>(n) >= sizeof h) {
            std::memcpy(&h, buf.data(), sizeof h);
            if (sizeof h + h.from_len + h.to_len == static_cast<size_t>(n) && olddir.valid() && newdir.valid()) {
                std::string from(buf.data() + sizeof h, h.from_len), to(buf.data() + sizeof h + h.from_len, h.to_len);
                result = handle(olddir.get(), from, newdir.get(), to, h.flags);
            }
        }
        if (::send(sock, &result, sizeof result, MSG_NOSIGNAL) != sizeof result) ::_exit(0);
    }
}

}  // namespace

int handle(int olddir, const std::string& from, int newdir, const std::string& to, unsigned flags) {
    auto [fparent, fname] = split(from);
    auto [tparent, tname] = split(to);
    base::Fd fp = parent_of(olddir, fparent), tp = parent_of(newdir, tparent);
    struct stat src;
    if (!fp.valid() || !tp.valid() || fname.empty() || tname.empty() ||
        ::fstatat(fp.get(), fname.c_str(), &src, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(src.st_mode))
        return kContinue;  // not a directory (or an error the kernel will report itself)
    if (::syscall(SYS_renameat2, fp.get(), fname.c_str(), tp.get(), tname.c_str(), flags) == 0) return 0;
    int err = errno;
    if (err != EXDEV || (flags & ~static_cast<unsigned>(RENAME_NOREPLACE))) return -err;
    // Only the overlay's own refusal: a move between two mounts stays EXDEV,
    // as the kernel said (callers such as mv and shutil.move handle it).
    uint64_t m = mount_of(fp.get());
    if (m == 0 || m != mount_of(tp.get())) return -EXDEV;
    // What rename(2) would check on the destination, before any copy.
    if (inside(tp.get(), src)) return -EINVAL;
    struct stat dst;
    bool exists = ::fstatat(tp.get(), tname.c_str(), &dst, AT_SYMLINK_NOFOLLOW) == 0;
    if (exists) {
        if (same(dst, src)) return 0;
        if (flags & RENAME_NOREPLACE) return -EEXIST;
        if (!S_ISDIR(dst.st_mode)) return -ENOTDIR;
        if (!empty_dir(tp.get(), tname)) return -ENOTEMPTY;
    }
    // Copy under a temporary name beside the destination (new, so its own
    // renames work), then put it in place and remove the original.
    std::string tmp = ".layover-mv." + std::to_string(::getpid()) + "." + tname.substr(0, 64);
    (void)review::remove_tree_at(tp.get(), tmp);
    auto copied = base::copy_tree(fp.get(), fname, tp.get(), tmp);
    if (!copied) return -(base::last_copy_errno() ? base::last_copy_errno() : EIO);
    if (exists && ::unlinkat(tp.get(), tname.c_str(), AT_REMOVEDIR) != 0) {
        err = errno;
        (void)review::remove_tree_at(tp.get(), tmp);
        return -err;
    }
    if (::renameat(tp.get(), tmp.c_str(), tp.get(), tname.c_str()) != 0) {
        err = errno;
        (void)review::remove_tree_at(tp.get(), tmp);
        return -err;
    }
    auto removed = review::remove_tree_at(fp.get(), fname);
    return removed ? 0 : -EIO;
}

base::Result<std::pair<base::Child, base::Fd>> start(pid_t pid) {
    std::string ns = "/proc/" + std::to_string(pid) + "/ns/";
    base::Fd user(::open((ns + "user").c_str(), O_RDONLY | O_CLOEXEC));
    base::Fd mnt(::open((ns + "mnt").c_str(), O_RDONLY | O_CLOEXEC));
    if (!user.valid() || !mnt.valid()) return base::sys_error("opening the sandbox's namespaces");
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return base::sys_error("socketpair");
    base::Fd mine(sv[0]), theirs(sv[1]);
    pid_t child = ::fork();
    if (child < 0) return base::sys_error("fork of the rename worker");
    if (child == 0) {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        base::close_fds_except({2, theirs.get(), user.get(), mnt.get()});
        // The user namespace first: it gives the capabilities the mount
        // namespace's setns needs; then drop them all.
        if (::setns(user.get(), CLONE_NEWUSER) != 0 || ::setns(mnt.get(), CLONE_NEWNS) != 0) ::_exit(1);
        ::close(user.get());
        ::close(mnt.get());
        drop_everything();
        serve(theirs.get());
    }
    return std::make_pair(base::Child(child), std::move(mine));
}

base::Result<int> call(int sock, int olddir, int newdir, unsigned flags, const std::string& from,
                       const std::string& to) {
    Header h = {flags, static_cast<uint32_t>(from.size()), static_cast<uint32_t>(to.size())};
    std::string msgbuf(reinterpret_cast<const char*>(&h), sizeof h);
    msgbuf += from;
    msgbuf += to;
    struct iovec iov = {msgbuf.data(), msgbuf.size()};
    char cbuf[CMSG_SPACE(2 * sizeof(int))] = {};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(2 * sizeof(int));
    int fds[2] = {olddir, newdir};
    std::memcpy(CMSG_DATA(c), fds, sizeof fds);
    if (::sendmsg(sock, &msg, MSG_NOSIGNAL) < 0) return base::sys_error("to the rename worker");
    int32_t result;
    if (::recv(sock, &result, sizeof result, 0) != sizeof result) return base::error("the rename worker is gone");
    return result;
}

}  // namespace rename_worker
