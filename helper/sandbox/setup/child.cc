// The sandboxed command's process: a nested user+mount namespace so every
// mount it inherits is locked (it cannot unmount the overlay to reach the
// real tree: in the setup namespace `umount TARGET` succeeds, in a nested one
// it fails), no capabilities, no_new_privs, only fds 0-2 and the IPC socket.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "helper/base/fd.h"
#include "helper/sandbox/common/privs.h"
#include "helper/sandbox/common/sandbox.h"
#include "helper/sandbox/rename/rename_notify.h"
#include "helper/sandbox/setup/landlock.h"
#include "helper/store/records/userns.h"
#include "overlay/mountinfo.h"

namespace {

[[noreturn]] void die(const SandboxPlan& plan, const base::Error& e) {
    sync_msg::send(plan.sync_fd, Sync::Error, e.message);
    ::_exit(125);
}

// The start dir was chosen on the host (first_run::start_dir); entered by
// path after the mounts, since an inherited cwd would still point at the
// real tree.
void enter_cwd(const SandboxPlan& plan) {
    if (!plan.cwd.empty() && ::chdir(plan.cwd.c_str()) == 0) return;
    if (::chdir(plan.mounts.target.c_str()) != 0) die(plan, base::sys_error("entering " + plan.mounts.target));
}

}  // namespace

void child_main(const SandboxPlan& plan) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != 1) ::_exit(125);  // init (PID 1 here) died before the prctl

    // Its own session: the terminal's Ctrl+C goes to the supervisor, which
    // forwards it; with an interactive pty, the pty becomes the controlling
    // terminal. An output-only one (stdin not a terminal) stands in for the
    // terminal fds among 1 and 2 and is no controlling terminal, as there was
    // none before it: /dev/tty fails rather than waits for keys.
    ::setsid();
    if (plan.pty_slave >= 0) {
        bool keys = plan.pty_fds & 1;
        if (keys && ::ioctl(plan.pty_slave, TIOCSCTTY, 0) != 0) die(plan, base::sys_error("taking the pty"));
        for (int fd = 0; fd <= 2; fd++)
            if (plan.pty_fds & (1u << fd)) ::dup2(plan.pty_slave, fd);
        if (keys) sync_msg::send(plan.sync_fd, Sync::Pty);  // [sync 8] keys may come now
    }

    // init is non-dumpable, and so is this process: its /proc files would
    // be root's and the uid_map write below refused.
    ::prctl(PR_SET_DUMPABLE, 1);
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
        die(plan, base::error(userns::explain_userns_failure(errno) + " (nested)"));
    // The caller's uid again inside, mapped to root of the setup namespace
    // (which is the caller outside).
    auto maps = userns::write_self_maps(plan.uid, 0, plan.gid, 0);
    if (!maps) die(plan, maps.error().context("nested user namespace"));
    // While this process's /proc files are still its own (dumpable).
    limits::prefer_oom_kill();
    // Until exec we share init's memory (init.cc, start_child), and with it
    // dumpability: off again at once (exec sets the command's own).
    ::prctl(PR_SET_DUMPABLE, 0);

    // In the nested user namespace: since Linux 5.14 RLIMIT_NPROC counts
    // this namespace's processes, so a fork bomb stops here.
    auto limited = limits::apply_in_child(plan.limits);
    if (!limited) die(plan, limited.error());

    enter_cwd(plan);

    // The filtered environment (helper/sandbox/policy/profile.h), then ours.
    ::clearenv();
    for (const auto& e : plan.env) ::putenv(const_cast<char*>(e.c_str()));

    std::vector<int> keep = {0, 1, 2, plan.sync_fd};
    if (plan.ipc_fd >= 0) {
        int moved = plan.ipc_fd == 3 ? 3 : ::dup2(plan.ipc_fd, 3);
        if (moved != 3) die(plan, base::sys_error("passing the IPC socket"));
        ::fcntl(3, F_SETFD, 0);
        keep.push_back(3);
        ::setenv("LAYOVER_IPC_FD", "3", 1);
    } else {
        ::unsetenv("LAYOVER_IPC_FD");
    }
    // The supervisor placed the sync socket at fd 10 or above, clear of 3.
    base::close_fds_except(keep);
    ::setenv("LAYOVER_SESSION", plan.session.c_str(), 1);
    ::setenv("LAYOVER_TARGET", plan.mounts.target.c_str(), 1);

    auto dropped = privs::drop_all();
    if (!dropped) die(plan, dropped.error());
    // After no_new_privs, which Landlock requires of an unprivileged caller.
    auto scoped = landlock::scope_abstract_unix_sockets();
    if (!scoped) die(plan, scoped.error());

    // [sync 7]: a discarding run's remover tears this namespace down, not our exit.
    if (plan.pass_mnt_ns) {
        base::Fd mnt(::open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC));
        if (mnt.valid()) sync_msg::send_fd(plan.sync_fd, Sync::MountNs, mnt.get());
    }
    // Last, right before exec: everything above may use what it denies.
    if (plan.seccomp) {
        // With the renames handed to the supervisor [sync 5] (helper/sandbox/rename/rename_notify.h).
        auto filtered = install_filter(plan.sync_fd, plan.rename_notify);
        if (!filtered) die(plan, filtered.error());
    }

    std::vector<char*> argv;
    for (const auto& a : plan.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execvp(argv[0], argv.data());
    int err = errno;
    std::string name = plan.command[0];
    if (err == ENOENT) {
        std::fprintf(stderr, "layover: %s: command not found inside the sandbox\n", name.c_str());
        ::_exit(127);
    }
    std::fprintf(stderr, "layover: %s: cannot execute: %s\n", name.c_str(), std::strerror(err));
    ::_exit(126);
}
