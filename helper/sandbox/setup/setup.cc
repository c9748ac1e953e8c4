// The setup process: new namespaces, id maps, the mount plan, then init.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "helper/base/child.h"
#include "helper/sandbox/common/sandbox.h"
#include "helper/sandbox/limits/memcg.h"
#include "helper/sandbox/live/live_freeze.h"
#include "helper/sandbox/rename/rename_notify.h"
#include "helper/sandbox/setup/netns.h"
#include "helper/store/records/userns.h"
#include "overlay/devfs.h"

namespace sync_msg {
bool send(int fd, Sync tag, const std::string& text) {
    std::string m(1, static_cast<char>(tag));
    m += text;
    return ::send(fd, m.data(), m.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(m.size());
}
bool send_fd(int fd, Sync tag, int passed) {
    char t = static_cast<char>(tag);
    struct iovec iov = {&t, 1};
    char cbuf[CMSG_SPACE(sizeof(int))] = {};
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof cbuf;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &passed, sizeof passed);
    return ::sendmsg(fd, &msg, MSG_NOSIGNAL) == 1;
}
}  // namespace sync_msg

namespace {

int fail(const SandboxPlan& plan, const base::Error& e) {
    sync_msg::send(plan.sync_fd, Sync::Error, e.message);
    return 125;
}

// Our parent's end of the sync socket is still open.
bool supervisor_alive(const SandboxPlan& plan) {
    struct pollfd p = {plan.sync_fd, POLLIN, 0};
    return ::poll(&p, 1, 0) == 0 || !(p.revents & (POLLHUP | POLLERR));
}

// [sync 0] from the supervisor; false if it is gone.
bool wait_go(const SandboxPlan& plan) {
    char go = 0;
    ssize_t got;
    while ((got = ::recv(plan.sync_fd, &go, 1, 0)) < 0 && errno == EINTR) {
    }
    return got == 1 && go == static_cast<char>(Sync::Go);
}

#define STEP(expr)                                   \
    do {                                             \
        auto _r = (expr);                            \
        if (!_r.ok()) return fail(plan, _r.error()); \
    } while (0)

}  // namespace

int setup_main(const SandboxPlan& plan) {
    // Die with the supervisor; check after, in case it died before the prctl
    // took effect (getppid() says 0 to a PID 1, so its end of the sync
    // socket tells).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (!supervisor_alive(plan)) return 125;
    // Out of the terminal's process group: Ctrl+C reaches the supervisor,
    // which forwards it to the command. A process group of our own, not a
    // session: setsid() would also make a scheduler autogroup, whose move
    // hands the CPU away at once (issue 20, "Start-up, eleventh pass"); init
    // never touches the terminal, and the child makes its own session.
    ::setpgid(0, 0);

    // --max-memory's cgroup, before anything of the sandbox is forked.
    STEP(memcg::enter(plan.limits.memory_cgroup));

    // The user, mount, IPC and PID namespaces came with our clone
    // (helper/sandbox/supervisor/supervisor.cc, spawn_setup). The network namespace is made on a thread
    // meanwhile (--network loopback: lo up; none: not even that) and entered
    // before init starts the command.
    netns::Pending net;
    if (!plan.mounts.host_network) net.start(plan.loopback);
    // "deny" must go to setgroups before gid_map: since Linux 3.19 an
    // unprivileged gid_map write requires it (CVE-2014-8989). Root inside
    // maps to the caller, so the mounts below are ours to make.
    STEP(userns::write_self_maps(0, plan.uid, 0, plan.gid));
    sync_msg::send(plan.sync_fd, Sync::Maps);  // [sync 1]

    STEP(overlay::make_private());
    // Open layers and clones before any mount below can hide their paths:
    // those outside the session while its dirs are made, then its own.
    auto handles = overlay::open_host_handles(plan.mounts);
    if (!handles) return fail(plan, handles.error());
    overlay::Handles& h = handles.value();
    if (plan.seccomp) precompile_filter(plan.rename_notify);  // for the child, which only loads it
    // ~0.1 ms for the preset's ~20 names (on a thread of its own it was no
    // faster: docs/performance.md, "The mask at start-up").
    STEP(overlay::build_masks(plan.mounts, h));
    // [sync 0]: a new session's dirs are made (usually by now).
    if (!wait_go(plan)) return 125;                     // the supervisor is gone
    live_freeze::Fds frozen = live_freeze::open(plan);  // what a checkpoint of the running session needs
    STEP(overlay::open_session_handles(plan.mounts, h));
    // tmpfs first: if the target lies under /tmp the overlay goes on top.
    STEP(overlay::mount_private_tmp(plan.mounts, h));
    live_freeze::keep_mask(frozen, h.mask);
    STEP(overlay::mount_scratch(plan.mounts, h));
    STEP(overlay::mount_overlay(plan.mounts, h));
    STEP(overlay::attach_submounts(plan.mounts, h));
    STEP(overlay::build_dev(plan.mounts, h));
    STEP(overlay::mask_host_state(plan.mounts, h));
    // After the overlay and its submounts (a secret may sit in either) and
    // after /dev (the source of hidden files' empty stand-in).
    STEP(overlay::attach_shown(plan.mounts, h));  // before hiding: a secret below one stays hidden
    if (!plan.mounts.host_network) {
        // The network namespace's own /sys (the host's lists its interfaces),
        // before hiding: a --hide path under /sys covers the new one.
        auto sys = net.own_sys();
        if (!sys) return fail(plan, sys.error());
        STEP(overlay::attach_own_sys(std::move(sys.value())));
    }
    STEP(overlay::hide_paths(plan.mounts));
    // Read-only last: an overlay whose upper dir sits on a read-only mount
    // fails with EINVAL, and mkdirs above need writable parents.
    STEP(overlay::make_rest_readonly(plan.mounts));
    STEP(overlay::make_scratch_writable(h));
    STEP(live_freeze::share_target(plan));
    for (const auto& w : h.warnings) sync_msg::send(plan.sync_fd, Sync::Warning, w);  // [sync 3]
    // The sized tmpfs's own root stays detached (only its dirs are bound):
    // dropping it means an unmount and a wait for an RCU grace period
    // (`synchronize_rcu_expedited`, ~0.05 ms and a sleep, issue 20), so it
    // is held until init exits, after the status [sync 6]. It points into
    // the sandbox's own tmpfs, not the real tree; the command's process
    // closes its copy (close_fds_except) as it does every fd of init's.
    base::Fd tmp_root = std::move(h.tmp);
    // Nothing may keep pointing into the real tree or the state dir.
    h = overlay::Handles();
    if (::chdir("/") != 0) return fail(plan, base::sys_error("chdir /"));

    if (!plan.mounts.host_network) STEP(net.enter());
    // [sync 0] again: the session's records are written (usually long since).
    if (!wait_go(plan)) return 125;
    sync_msg::send(plan.sync_fd, Sync::InitPid);  // [sync 2]
    // We are PID 1 of the new PID namespace: init from here on, holding the
    // checkpoint's clones (no process of the command can reach them: init is
    // non-dumpable and its user namespace is not the command's).
    return init_main(plan, frozen);
}
