#include "helper/store/layers/step_view.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "helper/base/child.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/userns.h"

namespace steps {

namespace {

std::string fd_path(int fd) { return "/proc/self/fd/" + std::to_string(fd); }

// In the child: the overlay's root, or -errno.
int mount_view(const std::string& d, int n, const std::string& target, bool live) {
    if (::unshare(CLONE_NEWNS) != 0) {
        // Not yet root of an owner namespace: become it, then try again.
        if (!userns::enter_owner_ns() || ::unshare(CLONE_NEWNS) != 0) return -errno;
    }
    std::vector<base::Fd> fds;
    if (live) {
        int fd = ::open((d + "/upper").c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) return -errno;
        fds.emplace_back(fd);
    }
    auto first = first_layer(d);  // below it: squashed steps, no layers
    for (int i = n; i >= (first ? first.value() : 1); i--) {
        auto l = open_layer(d, i);
        if (!l) return l.error().code ? -l.error().code : -EIO;
        fds.push_back(std::move(l.value()));
    }
    int t = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (t < 0) return -errno;
    fds.emplace_back(t);
    base::Fd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
    if (!fs.valid()) return -errno;
    auto set = [&](const char* key, const std::string& v) {
        return ::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, v.c_str(), 0) == 0;
    };
    bool each = true;  // "lowerdir+" (6.8+), else one string
    for (const auto& f : fds)
        if (!(each = set("lowerdir+", fd_path(f.get())))) break;
    if (!each) {
        std::string all;
        for (const auto& f : fds) all += (all.empty() ? "" : ":") + fd_path(f.get());
        if (!set("lowerdir", all)) return -errno;
    }
    if (::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        return -errno;
    base::Fd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
    if (!mnt.valid()) return -errno;
    int root = ::openat(mnt.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    return root < 0 ? -errno : root;
}

bool send_fd(int sock, int fd, int err) {
    char data[sizeof(int)];
    std::memcpy(data, &err, sizeof err);
    struct iovec iov = {data, sizeof data};
    alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr m = {};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    if (fd >= 0) {
        m.msg_control = ctl;
        m.msg_controllen = sizeof ctl;
        struct cmsghdr* c = CMSG_FIRSTHDR(&m);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    }
    return ::sendmsg(sock, &m, MSG_NOSIGNAL) == static_cast<ssize_t>(sizeof data);
}

// The fd (or -errno) the child sent.
int recv_fd(int sock) {
    int err = -EIO;
    struct iovec iov = {&err, sizeof err};
    alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr m = {};
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = ctl;
    m.msg_controllen = sizeof ctl;
    if (::recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != static_cast<ssize_t>(sizeof err)) return -EIO;
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        int fd = -1;
        std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
        return fd;
    }
    return err < 0 ? err : -EIO;
}

}  // namespace

base::Result<base::Fd> open_view(const std::string& d, int n, const std::string& target, bool live) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) != 0) return base::sys_error("socketpair");
    base::Fd mine(sv[0]), theirs(sv[1]);
    auto child = base::spawn([&]() -> int {
        mine.reset();
        int r = mount_view(d, n, target, live);
        return send_fd(theirs.get(), r, r) ? 0 : 1;
    });
    theirs.reset();
    if (!child) return child.error();
    int fd = recv_fd(mine.get());
    (void)child->wait();
    if (fd < 0)
        return base::sys_error(
            std::string(live ? "mounting the session's view" : "mounting the view at the end of step ") +
                (live ? "" : std::to_string(n)) + " (a read-only overlay; run 'layover doctor')",
            -fd);
    return base::Fd(fd);
}

}  // namespace steps
