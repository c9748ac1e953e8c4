#include "helper/sandbox/ipc/fd_pass.h"

#include <sys/socket.h>

#include <cstring>

namespace fd_pass {

constexpr size_t kMaxFds = 4;

bool send(int sock, const std::string& data, const std::vector<int>& fds) {
    struct iovec iov = {const_cast<char*>(data.data()), data.size()};
    alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * kMaxFds)] = {};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    if (!fds.empty() && fds.size() <= kMaxFds) {
        msg.msg_control = ctl;
        msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
        struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
        std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    }
    return ::sendmsg(sock, &msg, MSG_NOSIGNAL) == static_cast<ssize_t>(data.size());
}

ssize_t recv(int sock, std::string* data, size_t max, std::vector<base::Fd>* fds) {
    fds->clear();
    data->resize(max);
    struct iovec iov = {data->data(), max};
    alignas(struct cmsghdr) char ctl[CMSG_SPACE(sizeof(int) * kMaxFds)];
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl;
    msg.msg_controllen = sizeof ctl;
    ssize_t n = ::recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    data->resize(n > 0 ? static_cast<size_t>(n) : 0);
    if (n < 0) return n;
    for (struct cmsghdr* c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
        size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < count; i++) {
            int got;
            std::memcpy(&got, CMSG_DATA(c) + i * sizeof(int), sizeof got);
            fds->emplace_back(got);
        }
    }
    return n;
}

}  // namespace fd_pass
