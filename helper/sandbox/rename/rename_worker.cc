#include "helper/sandbox/rename/rename_worker.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>

#include "helper/sandbox/common/privs.h"
#include "helper/sandbox/ipc/fd_pass.h"
#include "helper/sandbox/rename/rename_tree.h"
#include "helper/store/records/rename_temps.h"

namespace rename_worker {

namespace {

int enter(int userns, int mntns, const Limits& limits, pid_t parent) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) return 1;
    // User namespace first: it grants the rights to join its mount namespace,
    // whose root and cwd setns then gives us.
    if (::setns(userns, CLONE_NEWUSER) != 0 || ::setns(mntns, CLONE_NEWNS) != 0) return 1;
    ::close(userns);
    ::close(mntns);
    if (!privs::drop_all()) return 1;
    ::prctl(PR_SET_DUMPABLE, 0);
    if (!limits::apply_in_child(limits)) return 1;
    // A copy past --max-size's RLIMIT_FSIZE fails (EFBIG) and is removed,
    // as the command's own write would: SIGXFSZ killed the worker midway,
    // its half-made copy left in the session and every waiting call let
    // run as the task asked (attack20).
    ::signal(SIGXFSZ, SIG_IGN);
    // A deep tree holds two fds per level while it is copied.
    struct rlimit nofile;
    if (::getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
        nofile.rlim_cur = nofile.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &nofile);
    }
    // And a few frames of stack per level (rename_tree.cc copies
    // recursively, to kMaxCopyDepth): room for them, so the copy fails
    // whole at the depth limit instead of the worker dying of SIGSEGV
    // half-way, its temporary copy left in the session (seen under ASan,
    // whose frames are larger, at 1,500 levels). The main thread's stack
    // grows on demand up to this limit.
    struct rlimit stack;
    if (::getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY &&
        stack.rlim_cur < (rlim_t{64} << 20)) {
        stack.rlim_cur = std::min<rlim_t>(rlim_t{64} << 20, stack.rlim_max);
        ::setrlimit(RLIMIT_STACK, &stack);
    }
    return 0;
}

void serve(int sock, const std::string& temps_key) {
    for (;;) {
        std::string msg;
        std::vector<base::Fd> fds;
        ssize_t n = fd_pass::recv(sock, &msg, 2 * PATH_MAX + 64, &fds);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;  // the supervisor is gone
        auto req = rename_call::decode_request(msg);
        if (!req) continue;
        size_t want = (req->old_fd ? 1 : 0) + (req->new_fd ? 1 : 0);
        rename_call::Reply reply{req->id, EBADF};
        if (fds.size() == want) {
            int olddir = req->old_fd ? fds[0].get() : AT_FDCWD;
            int newdir = req->new_fd ? fds[want - 1].get() : AT_FDCWD;
            reply.err = perform(olddir, newdir, *req, temps_key);
        }
        if (!fd_pass::send(sock, rename_call::encode(reply), {})) return;
    }
}

}  // namespace

int perform(int olddir, int newdir, const rename_call::Request& r, const std::string& temps_key) {
    const char* oldp = r.oldpath.c_str();
    const char* newp = r.newpath.c_str();
    if (r.sweep) {
        // Its dead predecessor's copy, in the dir it made it in (resolved as it did).
        base::Fd np(::openat(newdir, rename_call::split(r.newpath).parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (np.valid()) rename_tree::drop_temp(np.get(), rename_temps::temp_name(temps_key, r.id));
        return EXDEV;
    }
    if (r.link) return ::linkat(olddir, oldp, newdir, newp, static_cast<int>(r.flags)) == 0 ? 0 : errno;
    if (::renameat2(olddir, oldp, newdir, newp, r.flags) == 0) return 0;
    int err = errno;
    if (err != EXDEV || (r.flags & RENAME_EXCHANGE) || r.plain) return err;
    // The overlay's refusal to move a directory that is not upper-only (the
    // kernel checked everything else first: permissions, NOREPLACE, loops).
    auto o = rename_call::split(r.oldpath), n = rename_call::split(r.newpath);
    base::Fd op(::openat(olddir, o.parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    base::Fd np(::openat(newdir, n.parent.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!op.valid() || !np.valid()) return EXDEV;
    auto moved = rename_tree::move_by_copy(op.get(), o.name, np.get(), n.name, r.flags,
                                           rename_temps::temp_name(temps_key, r.id));
    if (moved) return 0;
    return moved.error().code ? moved.error().code : EXDEV;
}

base::Result<Worker> start(int userns, int mntns, const Limits& limits, const std::string& temps_key) {
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return base::sys_error("socketpair");
    base::Fd mine(sv[0]), theirs(sv[1]);
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) return base::sys_error("fork of the rename worker");
    if (pid == 0) {
        // Nothing of the supervisor's (session lock, pty, signalfd) stays.
        base::close_fds_except({theirs.get(), userns, mntns});
        if (enter(userns, mntns, limits, parent) != 0) ::_exit(1);
        serve(theirs.get(), temps_key);
        ::_exit(0);
    }
    ::fcntl(mine.get(), F_SETFL, O_NONBLOCK);
    return Worker{base::Child(pid), std::move(mine)};
}

}  // namespace rename_worker
