// PID 1 of the sandbox's PID namespace (setup, once its mounts are made):
// mounts a fresh /proc, starts the child, forwards signals to it, reaps
// orphans, serves the checkpoints of the running session, and exits with the
// child's status (128+N for signal N). When it exits the kernel kills
// everything left in the namespace, so nothing the command started outlives
// the session.
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "helper/base/child.h"
#include "helper/base/fd.h"
#include "helper/sandbox/common/sandbox.h"
#include "helper/sandbox/live/live_freeze.h"
#include "helper/sandbox/setup/leftovers.h"

namespace {

bool forwarded(int sig) {
    return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT || sig == SIGUSR1 || sig == SIGUSR2 ||
           sig == SIGCONT || sig == SIGALRM || sig == SIGWINCH;
}

int child_entry(void* plan) {
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    child_main(*static_cast<const SandboxPlan*>(plan));
}

// The command's process shares our memory until its exec (CLONE_VM |
// CLONE_VFORK, as posix_spawn does; we are suspended meanwhile and it runs
// on a stack of its own): no copy of our page tables at its start, none torn
// down at its exec (issue 20). A fork where no stack can be mapped.
pid_t start_child(const SandboxPlan& plan) {
    constexpr size_t kStack = size_t{1} << 20;  // untouched pages cost nothing
    void* stack =
        ::mmap(nullptr, kStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (stack == MAP_FAILED) {
        pid_t pid = ::fork();
        if (pid == 0) child_entry(const_cast<SandboxPlan*>(&plan));
        return pid;
    }
    pid_t pid = ::clone(child_entry, static_cast<char*>(stack) + kStack, CLONE_VM | CLONE_VFORK | SIGCHLD,
                        const_cast<SandboxPlan*>(&plan));
    int err = errno;
    ::munmap(stack, kStack);
    // The child made our shared memory dumpable for its uid_map write and
    // undid it after (child.cc); we stay non-dumpable whatever it reached.
    ::prctl(PR_SET_DUMPABLE, 0);
    errno = err;
    return pid;
}

}  // namespace

int init_main(const SandboxPlan& plan, live_freeze::Fds& frozen) {
    ::prctl(PR_SET_NAME, "layover-init");
    // Non-dumpable: the command (same uid, no capability in our namespace)
    // must not read our memory, nor /proc/1/environ, which still holds the
    // caller's unfiltered environment.
    ::prctl(PR_SET_DUMPABLE, 0);

    // Block everything before forking, so no signal is lost between fork and
    // the signalfd read. Blocked signals are queued even for a PID 1, which
    // would otherwise drop signals it has no handler for.
    sigset_t all;
    ::sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, nullptr);
    base::Fd sigs(::signalfd(-1, &all, SFD_CLOEXEC));
    if (!sigs.valid()) {
        sync_msg::send(plan.sync_fd, Sync::Error, base::sys_error("signalfd in init").message);
        return 125;
    }

    // /proc must be mounted by a process inside the new PID namespace, and
    // before the child's mount namespace copies (and locks) the mount table.
    auto proc = overlay::mount_proc();
    if (!proc) {
        sync_msg::send(plan.sync_fd, Sync::Error, proc.error().message);
        return 125;
    }

    pid_t child = start_child(plan);
    if (child < 0) {
        sync_msg::send(plan.sync_fd, Sync::Error, base::sys_error("fork of the command").message);
        return 125;
    }
    // Only the child needs these. The sync socket stays open here to report
    // leftover processes [sync 4]; the child's copy is close-on-exec, and it
    // closes the checkpoint's clones and socket (close_fds_except) before
    // anything of the command runs.
    if (plan.pty_slave >= 0) ::close(plan.pty_slave);
    if (plan.ipc_fd >= 0) ::close(plan.ipc_fd);
    if (::chdir("/") != 0) {
    }

    int status = 0;
    bool child_done = false;
    int freeze = plan.freeze_fd;
    for (;;) {
        struct pollfd ready[2] = {{sigs.get(), POLLIN, 0}, {freeze, POLLIN, 0}};
        if (::poll(ready, freeze >= 0 ? 2 : 1, -1) < 0) continue;
        if (freeze >= 0 && (ready[1].revents & (POLLIN | POLLHUP | POLLERR)) &&
            !live_freeze::serve_one(plan, frozen, freeze))
            freeze = -1;  // the supervisor serves no more checkpoints
        struct signalfd_siginfo si;
        if (!(ready[0].revents & POLLIN) || ::read(sigs.get(), &si, sizeof si) != sizeof si) continue;
        int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGCHLD) {
            bool done = false;
            for (;;) {
                int st;
                pid_t p = ::waitpid(-1, &st, WNOHANG);
                if (p < 0 && errno == ECHILD && child_done) done = true;  // --wait: the last one is gone
                if (p <= 0) break;
                if (p == child) {
                    status = st;
                    child_done = true;
                    if (!plan.wait_all) done = true;
                }
            }
            if (done) break;
        } else if (forwarded(sig)) {
            // The child is a session leader: its process group is its pid.
            // Once it is gone (--wait), everything left gets the signal.
            if (child_done) ::kill(-1, sig);
            else if (::kill(-child, sig) != 0) ::kill(child, sig);
        }
    }
    // Anything still running dies with us (the kernel kills the namespace):
    // say what, once.
    // Every process of the namespace descends from us (orphans are ours), so
    // with no child left there is nothing to list (a /proc walk saved).
    bool alone = ::waitpid(-1, nullptr, WNOHANG) < 0 && errno == ECHILD;
    if (!plan.wait_all && !alone) {
        auto left = list_leftovers();
        if (!left.empty())
            sync_msg::send(plan.sync_fd, Sync::Leftover,
                           std::to_string(left.size()) + "\t" + describe_leftovers(left, 5));
    }
    // The exit status, before the teardown that our exit starts [sync 6]:
    // nothing of the command may run once a discarding run has returned it.
    // Every process of the namespace descends from us, and orphans are
    // ours: once we have no child left, nothing else is alive in here.
    if (!alone) ::kill(-1, SIGKILL);
    while (::waitpid(-1, nullptr, 0) > 0 || errno == EINTR) {
    }
    sync_msg::send(plan.sync_fd, Sync::Status, std::to_string(base::exit_code_of(status)));
    return base::exit_code_of(status);
}
