#include "helper/sandbox/ipc/control.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace control {

namespace {

constexpr const char* kName = "control.sock";

// The socket's address through an fd of the session dir: short whatever
// the state dir's length (sun_path holds 108 bytes).
base::Result<sockaddr_un> address(const base::Fd& dir) {
    sockaddr_un a = {};
    a.sun_family = AF_UNIX;
    std::string p = "/proc/self/fd/" + std::to_string(dir.get()) + "/" + kName;
    std::memcpy(a.sun_path, p.data(), p.size());
    return a;
}

base::Result<base::Fd> open_dir(const std::string& d) {
    return base::open_at(AT_FDCWD, d, O_PATH | O_DIRECTORY | O_NOFOLLOW);
}

// How long a client waits for its answer: LAYOVER_CONTROL_WAIT seconds
// (1 to 3600; docs/cli.md), else 2 minutes.
long answer_wait() {
    const char* v = std::getenv("LAYOVER_CONTROL_WAIT");
    if (!v || !*v) return 120;
    char* end = nullptr;
    long n = std::strtol(v, &end, 10);
    return (*end == '\0' && n >= 1 && n <= 3600) ? n : 120;
}

void send_reply(int fd, Reply r) {
    if (r.error.size() > 4000) {  // the decoder's bound
        r.error.resize(3990);
        r.error += "\n  ...";
    }
    std::string m = encode_reply(r);
    (void)::send(fd, m.data(), m.size(), MSG_NOSIGNAL);
}

// A spare fd (of /dev/null), closed for a moment when the fd table is full:
// accept() failing with EMFILE or ENFILE leaves the connection queued, the
// listener stays readable and the supervisor's poll loop would wake at once,
// forever (a core at 100% until the table had room again).
base::Fd& spare() {
    static base::Fd fd;
    if (!fd.valid()) fd = base::Fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
    return fd;
}

// No fd for the connection: the spare's slot takes it off the queue, to be
// answered and closed. With no room even so (the limit below the table's
// end, another process taking the slot), a pause of a tenth of a second: the
// loop then wakes ten times a second, not without end, until there is room.
void refuse_when_full(int listen_fd, int err) {
    spare().reset();
    base::Fd c(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (c.valid()) {
        // The request is read (and dropped) first: a socket closed with data
        // unread resets its peer, which then never sees the reply.
        char drop[1];
        struct pollfd p = {c.get(), POLLIN, 0};
        if (::poll(&p, 1, 1000) == 1) (void)::recv(c.get(), drop, sizeof drop, MSG_DONTWAIT | MSG_TRUNC);
        send_reply(c.get(), {false, 0,
                             "the session's supervisor is out of file descriptors (" + std::string(std::strerror(err)) +
                                 "); nothing was done: try again once it has closed some, or stop the session"});
        c.reset();
        (void)spare();
        return;
    }
    struct timespec pause = {0, 100 * 1000 * 1000};
    ::nanosleep(&pause, nullptr);
}

}  // namespace

base::Result<base::Fd> listen(const std::string& session_dir) {
    TRY(base::Fd dir, open_dir(session_dir));
    ::unlinkat(dir.get(), kName, 0);
    base::Fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!s.valid()) return base::sys_error("creating the control socket");
    ::fchmod(s.get(), 0600);  // the mode bind gives the socket file
    TRY(sockaddr_un a, address(dir));
    if (::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
        return base::sys_error("binding the control socket in " + session_dir);
    if (::fchmodat(dir.get(), kName, 0600, 0) != 0 || ::listen(s.get(), 8) != 0)
        return base::sys_error("the control socket in " + session_dir);
    (void)spare();  // while the table has room
    return s;
}

void remove_socket(const std::string& session_dir) { ::unlink((session_dir + "/" + kName).c_str()); }

void serve_one(int listen_fd, const Handler& handler) {
    (void)spare();  // taken again once the table has room
    base::Fd c(::accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC));
    if (!c.valid()) {
        if (errno == EMFILE || errno == ENFILE) refuse_when_full(listen_fd, errno);
        return;
    }
    struct ucred cred = {};
    socklen_t len = sizeof cred;
    if (::getsockopt(c.get(), SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.uid != ::getuid()) {
        send_reply(c.get(), {false, 0, "refused: the control socket serves its owner only"});
        return;
    }
    // The request comes with the connection; a peer that sends nothing in
    // a second is dropped, so the supervisor's loop never stalls on it.
    struct pollfd p = {c.get(), POLLIN, 0};
    if (::poll(&p, 1, 1000) != 1) return;
    std::string buf(kMaxMessage + 1, '\0');
    ssize_t n = ::recv(c.get(), buf.data(), buf.size(), MSG_DONTWAIT | MSG_TRUNC);
    if (n <= 0) return;
    if (static_cast<size_t>(n) > buf.size()) {
        send_reply(c.get(),
                   {false, 0, "malformed control message: longer than " + std::to_string(kMaxMessage) + " bytes"});
        return;
    }
    buf.resize(static_cast<size_t>(n));
    auto req = decode_request(buf);
    if (!req) {
        send_reply(c.get(), {false, 0, req.error().message});
        return;
    }
    req->peer = cred.pid;
    // A client that gave up waiting (busy with an earlier request) has
    // closed its end: its request is dropped unserved, as it was told.
    struct pollfd h = {c.get(), POLLRDHUP, 0};
    if (::poll(&h, 1, 0) == 1 && (h.revents & (POLLHUP | POLLRDHUP))) return;
    send_reply(c.get(), handler(req.value()));
}

base::Result<int> checkpoint(const std::string& session_dir, const std::string& label) {
    TRY(Reply r, ask(session_dir, {"checkpoint", label}));
    return r.step;
}

base::Result<Reply> ask(const std::string& session_dir, const Request& req) {
    TRY(base::Fd dir, open_dir(session_dir));
    base::Fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    if (!s.valid()) return base::sys_error("creating a socket");
    TRY(sockaddr_un a, address(dir));
    if (::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        int err = errno;
        return base::sys_error("reaching the session's supervisor (" + session_dir + "/" + kName +
                                   "); is it a supervisor of an older layover? stop the session, then " + req.op +
                                   " it",
                               err);
    }
    // A request in progress (one at a time) holds this one in the backlog.
    long wait = answer_wait();
    struct timeval tv = {wait, 0};
    ::setsockopt(s.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    std::string m = encode_request(req);
    if (::send(s.get(), m.data(), m.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(m.size()))
        return base::sys_error("sending to the session's supervisor");
    std::string buf(kMaxMessage + 1, '\0');
    ssize_t n = ::recv(s.get(), buf.data(), buf.size(), MSG_TRUNC);
    if (n < 0) {
        int err = errno;
        if (err == EAGAIN)
            return base::error("the session's supervisor did not answer in " + std::to_string(wait) +
                               " seconds (busy with an earlier request?); see 'layover log', then try again");
        return base::sys_error("waiting for the session's supervisor", err);
    }
    if (n == 0) return base::error("the session's supervisor closed the control socket without an answer");
    if (static_cast<size_t>(n) > buf.size()) return base::error("the session's supervisor answered too long a message");
    buf.resize(static_cast<size_t>(n));
    TRY(Reply r, decode_reply(buf));
    if (!r.ok) return base::error(r.error);
    return r;
}

}  // namespace control
