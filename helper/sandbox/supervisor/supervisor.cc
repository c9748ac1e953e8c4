// `layover run`: the supervisor. It stays outside every new namespace,
// keeps the session, relays the terminal and signals, and once the command
// exits hands over to the on-exit action (keep, discard, prompt, apply, save).
#include "helper/sandbox/supervisor/supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "helper/base/child.h"
#include "helper/base/clock.h"
#include "helper/sandbox/ipc/control.h"
#include "helper/sandbox/ipc/fd_pass.h"
#include "helper/sandbox/limits/limit_watch.h"
#include "helper/sandbox/live/live_checkpoint.h"
#include "helper/sandbox/prepare/prepare.h"
#include "helper/sandbox/rename/rename_notify.h"
#include "helper/sandbox/supervisor/finish.h"
#include "helper/sandbox/supervisor/pty_relay.h"
#include "helper/store/records/userns.h"
#include "helper/store/session/layer_gc.h"

namespace {

// Move an fd to 10 or above, clear of the 0-3 the command will use.
int lift_fd(int fd) {
    int n = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
    ::close(fd);
    return n;
}

// setup, then init: a fork straight into new user, mount, IPC and PID
// namespaces, PID 1 of the last (issue 20: one process fewer than a setup
// that forks init; the kernel makes the user namespace first, which owns the
// others). Like glibc's fork, the child's thread id is written where
// glibc keeps it (set_tid_address's), so pthread calls in it stay right;
// unlike it, no fork handlers run, so this is called while run has no
// other thread (none is started before supervise()): no lock of malloc's or
// stdio's can be held. Returns the pid, or -1 with errno.
pid_t spawn_setup() {
    int* tid = nullptr;
    unsigned long flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWPID | SIGCHLD;
    if (::prctl(PR_GET_TID_ADDRESS, &tid) == 0 && tid) flags |= CLONE_CHILD_SETTID | CLONE_CHILD_CLEARTID;
    return static_cast<pid_t>(::syscall(SYS_clone, flags, nullptr, nullptr, tid, nullptr));
}

// One sync message, and the fd it carries if any ([sync 5]).
ssize_t recv_sync(int sock, char* buf, size_t size, int* passed) {
    std::string msg;
    std::vector<base::Fd> fds;
    ssize_t n = fd_pass::recv(sock, &msg, size, &fds);
    std::memcpy(buf, msg.data(), msg.size());
    if (!fds.empty()) *passed = fds[0].release();
    return n;
}

// [sync 4] "COUNT\tname (pid N), ...": one line, with the way to keep them.
void report_leftovers(const std::string& msg) {
    size_t tab = msg.find('\t');
    if (tab == std::string::npos) return;
    std::string n = msg.substr(0, tab);
    std::fprintf(stderr, "layover: killed %s background process%s at exit: %s (--wait waits for them)\n", n.c_str(),
                 n == "1" ? "" : "es", msg.substr(tab + 1).c_str());
}

// Act on what the gate holds by how far the run has got: relay, queue for
// init, resize the pty. Returns a signal that cancels the run, or 0.
int take_signals(PreparedRun& run, run_signals::Pending& pending, pid_t init, std::optional<PtyRelay>& pty) {
    using run_signals::Phase;
    Phase phase = init > 0 ? Phase::Running : run.dirs_pending ? Phase::Starting : Phase::Made;
    while (int sig = run.signals.next()) {
        switch (run_signals::action_for(sig, phase)) {
            case run_signals::Action::Cancel: return sig;
            case run_signals::Action::Queue: pending.add(sig); break;
            case run_signals::Action::Forward: ::kill(init, sig); break;  // init forwards it to the command
            case run_signals::Action::Resize:  // the kernel signals a pty's own process group only
                if (pty) pty->resize();
                if (pty && pty->output_only() && init > 0) ::kill(init, SIGWINCH);
                break;
            case run_signals::Action::None: break;
        }
    }
    return 0;
}

}  // namespace

Outcome supervise(PreparedRun& run, std::optional<PtyRelay>& pty) {
    Outcome out;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) {
        out.setup_error = base::sys_error("socketpair").message;
        return out;
    }
    base::Fd mine(lift_fd(sv[0]));
    run.plan.sync_fd = lift_fd(sv[1]);
    // Checkpoint requests to setup (helper/sandbox/live/live_freeze.h).
    base::Fd freeze;
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == 0) {
        freeze = base::Fd(lift_fd(sv[0]));
        run.plan.freeze_fd = lift_fd(sv[1]);
    }

    pid_t pid = spawn_setup();
    if (pid < 0) {
        int err = errno;  // out of processes or memory, or no namespaces for us
        out.setup_error =
            err == EAGAIN || err == ENOMEM ? base::sys_error("fork", err).message : userns::explain_userns_failure(err);
        return out;
    }
    if (pid == 0) {
        // Every signal blocked from its birth: setup is PID 1 (init once its
        // mounts are made), and a PID 1 drops an unblocked signal it has no
        // handler for, so one relayed before init's signalfd would be lost. The command
        // gets an empty mask (helper/sandbox/setup/init.cc); the supervisor's SIGKILL still works.
        sigset_t all;
        ::sigfillset(&all);
        ::sigprocmask(SIG_SETMASK, &all, nullptr);
        std::vector<int> keep = {0, 1, 2, run.plan.sync_fd};
        if (run.plan.freeze_fd >= 0) keep.push_back(run.plan.freeze_fd);
        if (run.plan.ipc_fd >= 0) keep.push_back(run.plan.ipc_fd);
        if (run.plan.pty_slave >= 0) keep.push_back(run.plan.pty_slave);
        // Drops the session lock, the pty master and the signalfd too: fork
        // without exec would otherwise carry them into the sandbox.
        base::close_fds_except(keep);
        ::_exit(setup_main(run.plan));
    }
    base::Child setup(pid);
    ::close(run.plan.sync_fd);
    if (run.plan.freeze_fd >= 0) ::close(run.plan.freeze_fd);
    // Signals since run's first instruction: one that ends the command ends
    // a new session before its dir exists (nothing made); the rest wait for init.
    run_signals::Pending pending;
    if ((out.cancelled = take_signals(run, pending, -1, pty)) != 0) return out;  // setup is killed and reaped
    // While setup makes the namespaces and mounts, on the other core: a new
    // session's dirs (setup opens them once told [sync 0]), then its records.
    auto made = make_session_dirs(run);
    if (made) sync_msg::send(mine.get(), Sync::Go);  // [sync 0] the dirs
    if (made) made = write_start_records(run);
    if (!made) {
        out.setup_error = made.error().message;
        return out;  // setup is killed and reaped (base::Child)
    }
    // Before the command can start (it copies files up from then on): the
    // time from which every rename and link it makes is noted, as the loop
    // below answers them all (helper/store/session/first_copies.h, "moves"). The
    // coarse clock, which stamps a file's birth: a precise time could fall
    // after the birth of a copy made within the same tick.
    struct timespec noting_from {};
    ::clock_gettime(CLOCK_REALTIME_COARSE, &noting_from);
    // `layover checkpoint`/`fork` of this session (helper/sandbox/ipc/control.h;
    // without it, a checkpoint says so): listening before the command can
    // start, so a checkpoint asked as soon as it has written finds it (it was
    // made after the limit watch, and a fork right after a first write found
    // no socket under load).
    auto ctl = control::listen(run.session_dir);
    sync_msg::send(mine.get(), Sync::Go);                   // [sync 0] the records
    if (!run.discarding) run.flush.start(run.session_dir);  // helper/sandbox/prepare/upper_flush.h
    if (pty) {
        pty->close_slave();
        pty->enter_raw();
    }

    std::vector<std::string> scratch_uppers;
    for (const auto& s : run.plan.mounts.scratch) scratch_uppers.push_back(s.upper);
    LimitWatch watch(run.plan.limits, session::upper_dir(run.session_dir), steps::frozen_layers(run.session_dir),
                     scratch_uppers);
    pid_t init = -1;
    bool exited = false;
    int status = 0, early_code = -1;
    bool pty_open = pty.has_value();
    bool stdin_open = pty && !pty->output_only();  // an output-only pty: stdin stays the command's own
    bool keys_held = stdin_open;                   // until the command owns its pty [sync 8]
    RenameService renames(run.plan.limits);        // directory renames (helper/sandbox/rename/rename_notify.h)
    bool ipc_watched = run.plan.ipc_fd >= 0;       // the caller gone: LimitWatch::caller_gone
    renames.set_session(run.session_dir);
    if (!run.discarding)
        renames.note_copies(run.session_dir, run.plan.mounts.target,
                            base::time_ns(noting_from.tv_sec, noting_from.tv_nsec));
    LiveCheckpoint live(run, freeze.get());
    live.set_renames(&renames);
    while (!exited) {
        struct pollfd fds[10] = {{run.signals.fd(), POLLIN, 0},
                                 {mine.get(), POLLIN, 0},
                                 {-1, POLLIN, 0},
                                 {-1, POLLIN, 0},
                                 {out.stopped.empty() ? watch.fd() : -1, POLLIN, 0},
                                 {renames.listener(), POLLIN, 0},
                                 {renames.worker(), POLLIN, 0},
                                 {ctl ? ctl->get() : -1, POLLIN, 0},
                                 {-1, POLLOUT, 0},
                                 // The command's end of the IPC socket, as run got it: only
                                 // its hang-up (the caller's end closed) is asked for.
                                 {ipc_watched ? run.plan.ipc_fd : -1, 0, 0}};
        if (pty_open && !pty->output_waiting()) fds[2].fd = pty->master();
        if (pty && pty->output_waiting()) fds[8].fd = pty->output_fd();  // the terminal takes no more yet
        if (stdin_open && !keys_held) fds[3].fd = STDIN_FILENO;
        if (::poll(fds, 10, out.stopped.empty() ? watch.poll_timeout() : -1) < 0 && errno != EINTR) break;
        if (fds[9].revents & (POLLHUP | POLLERR | POLLNVAL)) {
            watch.caller_gone();
            ipc_watched = false;
        }
        renames.on_listener(fds[5].revents);
        renames.on_worker(fds[6].revents);
        if (out.stopped.empty()) {
            out.stopped = watch.check(&out.stop_code);
            if (!out.stopped.empty()) watch.stop(pid);
        }
        if (fds[1].revents & POLLIN) {
            char buf[4096];
            int passed = -1;
            ssize_t n = recv_sync(mine.get(), buf, sizeof buf, &passed);
            if (n > 0 && static_cast<Sync>(buf[0]) == Sync::Listener && passed >= 0) {
                renames.set_listener(base::Fd(passed));  // [sync 5]
            } else if (n > 0 && static_cast<Sync>(buf[0]) == Sync::MountNs && passed >= 0 && run.discarding) {
                run.child_mnt = base::Fd(passed);  // [sync 7] for the remover
            } else if (passed >= 0) {
                ::close(passed);
            }
            if (n > 0 && static_cast<Sync>(buf[0]) != Sync::Listener) {
                std::string msg(buf + 1, static_cast<size_t>(n - 1));
                switch (static_cast<Sync>(buf[0])) {
                    case Sync::Maps:  // [sync 1] maps written: only now may we go non-dumpable
                        ::prctl(PR_SET_DUMPABLE, 0);
                        break;
                    case Sync::InitPid:  // [sync 2] setup is done: it is init now
                        init = pid;
                        watch.track_init(init);
                        for (int sig : pending.take()) ::kill(init, sig);  // those that came before
                        // The exit's remover, forked now, while the command starts (setup is done
                        // with its mounts): run's exit after a discard then pays for no fork.
                        if (run.discarding && !run.remover.valid()) {
                            base::Fd setup_fd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
                            run.remover = Remover::start(setup_fd.get());
                        }
                        break;
                    case Sync::Warning: std::fprintf(stderr, "layover: warning: %s\n", msg.c_str()); break;  // [sync 3]
                    case Sync::Error: out.setup_error = msg; break;                                          // [sync E]
                    case Sync::Leftover:                                                                     // [sync 4]
                        if (pty) pty->drain();  // what the command printed comes before the line
                        report_leftovers(msg);
                        break;
                    case Sync::Listener: break;
                    case Sync::MountNs: break;
                    case Sync::Pty: keys_held = false; break;         // [sync 8]
                    case Sync::Go: break;                             // [sync 0] goes the other way
                    case Sync::Status:                                // [sync 6]
                        if (run.exit_early && out.stopped.empty()) {  // a stopped run is kept: wait
                            early_code = std::atoi(msg.c_str());
                            exited = true;
                        }
                        break;
                }
            } else if (n == 0) {
                fds[1].fd = -1;
                mine.reset();  // every copy closed: setup and child are gone or exec'd
            }
        }
        // A control request waits while setup's messages are queued: the
        // command can write (and a client see it) before we read init's pid.
        if ((fds[7].revents & POLLIN) && !(fds[1].revents & POLLIN))
            control::serve_one(fds[7].fd, [&](const control::Request& r) { return live.serve(r, init); });
        if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
            pty_open = pty->pump_output();
            keys_held = false;  // output: the child has its pty (set up after taking it), [sync 8] or not
        }
        if (fds[3].revents & (POLLIN | POLLHUP | POLLERR)) stdin_open = pty->pump_input();
        if (fds[8].revents) pty->flush(false);
        if (fds[0].revents & POLLIN) {
            (void)take_signals(run, pending, init, pty);  // the dirs exist: nothing cancels now
            pid_t r = ::waitpid(pid, &status, WNOHANG);
            if (r == pid) {
                setup.release();
                exited = true;
            }
        }
    }
    // A discarded session's dir goes whole, socket and all (a stopped one is kept).
    if (ctl && !(run.discarding && early_code >= 0 && out.stopped.empty())) control::remove_socket(run.session_dir);
    if (!out.stopped.empty()) {
        run.child_mnt.reset();  // kept: its overlay must be gone before the upper is read
        watch.wait_stopped();
    }
    // Late messages (an error sent just before exit) are still queued.
    if (mine.valid()) {
        char buf[4096];
        ssize_t n;
        while ((n = ::recv(mine.get(), buf, sizeof buf, MSG_DONTWAIT)) > 0)
            if (static_cast<Sync>(buf[0]) == Sync::Error) out.setup_error.assign(buf + 1, static_cast<size_t>(n - 1));
            else if (static_cast<Sync>(buf[0]) == Sync::Leftover) {
                if (pty) pty->drain();  // what the command printed comes before the line, as in the loop
                report_leftovers(std::string(buf + 1, n - 1));
            }
    }
    if (pty) {
        pty->drain();
        pty->restore();
    }
    // The signals stay blocked until run exits: one that comes while the
    // session is finished is dropped (helper/sandbox/prepare/run_signals.h), never the end of run.
    out.exit_code = base::exit_code_of(status);
    if (early_code >= 0 && setup.pid() > 0) {
        // Setup is still exiting: the kernel tears the namespaces down while
        // we go on; our exit SIGKILLs it (PDEATHSIG) if it has not finished.
        run.teardown = base::Fd(static_cast<int>(::syscall(SYS_pidfd_open, setup.pid(), 0)));
        setup.release();
        out.exit_code = early_code;
    }
    return out;
}
