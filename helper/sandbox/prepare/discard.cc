#include "helper/sandbox/prepare/discard.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <vector>

#include "helper/base/title.h"
#include "helper/sandbox/ipc/fd_pass.h"
#include "helper/sandbox/prepare/spare.h"
#include "helper/store/session/remove.h"
#include "helper/store/session/session.h"

std::string deleting_dir(const std::string& state) { return state + "/deleting"; }

namespace {

// The detached remover: a process group of its own (no Ctrl+C of the
// terminal's, no kill of run's job reaches it), no terminal fds, no
// inherited pipes (a caller reading run's stdout to EOF must not wait for
// it), default signals. Not a session of its own: setsid() would make a
// scheduler autogroup, where its nice 19 weighs as much as the next run,
// and the move hands the CPU away mid-start (issue 20, "Start-up, eleventh
// pass").
void detach(std::vector<int> keep) {
    // Not `layover run ... -- COMMAND` in ps for the length of the delete.
    base::set_title("layover-remove");
    ::setpgid(0, 0);
    sigset_t none;
    ::sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
    if (null >= 0)
        for (int fd = 0; fd < 3; fd++) ::dup2(null, fd);
    keep.insert(keep.end(), {0, 1, 2});
    base::close_fds_except(keep);
    // Lowest CPU priority: the next run, often started at once, goes first.
    ::setpriority(PRIO_PROCESS, 0, 19);
    // And no preemption on wake-up (SCHED_BATCH, its fair share otherwise,
    // unlike SCHED_IDLE, docs/performance.md "Start-up, eighth pass"): at
    // the hand-over it waits for a free CPU instead of taking run's
    // (issue 20, "Start-up, ninth pass"). Also undoes a real-time policy
    // inherited from a caller under chrt.
    struct sched_param none_rt = {};
    ::sched_setscheduler(0, SCHED_BATCH, &none_rt);
}

// Wait for the sandbox's teardown, remove `path` (in STATE/deleting/), then
// what a killed remover left there.
[[noreturn]] void remove_and_exit(const std::string& path, int wait_fd) {
    if (wait_fd >= 0) {
        struct pollfd p = {wait_fd, POLLIN, 0};
        while (::poll(&p, 1, -1) < 0 && errno == EINTR) {
        }
    }
    std::string parent = path.substr(0, path.rfind('/'));
    std::string state = parent.substr(0, parent.rfind('/'));
    struct stat st;  // the next new session's dirs, laid out as this one's (helper/sandbox/prepare/spare.h)
    make_spare(state, ::lstat((path + "/outside/0").c_str(), &st) == 0);
    (void)remove_tree_fast(path);
    purge_deleting(state);
    ::_exit(0);
}

}  // namespace

Remover Remover::start(int wait_for) {
    Remover r;
    int sv[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0) return r;
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(sv[0]);
        detach({sv[1], wait_for});
        std::string path;
        std::vector<base::Fd> lock;  // held until we exit
        ssize_t n;
        while ((n = fd_pass::recv(sv[1], &path, PATH_MAX, &lock)) < 0 && errno == EINTR) {
        }
        if (n <= 0 || path.empty() || path[0] != '/') ::_exit(0);  // EOF: the session stays
        if (lock.size() > 1) {
            // The held namespace: its teardown, here, once run's copy is
            // closed (it closes the socket after it: hand_over).
            char c;
            while (::recv(sv[1], &c, 1, 0) < 0 && errno == EINTR) {
            }
            lock.resize(1);
        }
        remove_and_exit(path, wait_for);
    }
    ::close(sv[1]);
    if (pid > 0) r.sock_ = base::Fd(sv[0]);
    else ::close(sv[0]);
    return r;
}

bool Remover::hand_over(const std::string& path, int lock_fd, base::Fd& held) {
    if (!sock_.valid()) return false;
    std::vector<int> fds;
    if (lock_fd >= 0) fds.push_back(lock_fd);
    if (lock_fd >= 0 && held.valid()) fds.push_back(held.get());
    bool ok = fd_pass::send(sock_.get(), path, fds);
    // Our copy of the namespace first, then the socket: the remover drops its
    // copy, the last, only at this EOF (its teardown is then never ours).
    if (ok) held.reset();
    sock_.reset();
    return ok;
}

base::Result<void> remove_in_background(const std::string& state, const std::string& dir, base::Fd lock,
                                        base::Fd wait_for, Remover* ready, base::Fd held) {
    std::string parent = deleting_dir(state);
    std::string base_name = dir.substr(dir.rfind('/') + 1) + "." + std::to_string(::getpid());
    std::string dest;
    bool made = false;  // STATE/deleting/ is made once, when a rename finds it missing
    for (int n = 0;; n++) {
        dest = parent + "/" + base_name + (n ? "." + std::to_string(n) : "");
        if (::renameat2(AT_FDCWD, dir.c_str(), AT_FDCWD, dest.c_str(), RENAME_NOREPLACE) == 0) break;
        if (errno == ENOENT && !made) {
            if (::mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("creating " + parent);
            made = true;
            n--;
            continue;
        }
        // Cannot move it aside (sessions/ a mount of its own, say): remove it here, as before.
        if ((errno != EEXIST && errno != ENOTEMPTY) || n >= 100) {
            held.reset();
            return remove_tree_fast(dir);
        }
    }
    // One fork, not waited for: run exits right after, and the remover, in
    // a session of its own, is reparented. (A double fork cost a second
    // fork of this process and a wait for its exit, ~0.5 ms of run's exit.)
    if (ready && ready->hand_over(dest, lock.get(), held)) return base::Ok();
    pid_t pid = ::fork();
    if (pid == 0) {
        detach({lock.get(), wait_for.get()});  // closes `held`: its teardown, here
        remove_and_exit(dest, wait_for.get());
    }
    if (pid < 0) {
        if (wait_for.valid()) return base::Ok();  // still mounted: purge_deleting() removes it later
        held.reset();
        return remove_tree_fast(dest);
    }
    return base::Ok();
}

base::Result<void> remove_aside(const std::string& state, const std::string& dir, const char* tag) {
    std::string gone = dir;
    std::string parent = deleting_dir(state);
    std::string aside = parent + "/" + dir.substr(dir.rfind('/') + 1) + "." + tag + "." + std::to_string(::getpid());
    if (::mkdir(parent.c_str(), 0700) == 0 || errno == EEXIST)
        if (::renameat2(AT_FDCWD, dir.c_str(), AT_FDCWD, aside.c_str(), RENAME_NOREPLACE) == 0) gone = aside;
    return remove_tree_fast(gone);
}

void purge_deleting(const std::string& state) {
    std::string parent = deleting_dir(state);
    DIR* d = ::opendir(parent.c_str());
    if (!d) return;
    std::vector<std::string> stale;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        // A live remover holds the entry's lock (its session lock file) until
        // it removes that file; then the entry's ctime shows it at work.
        std::string p = parent + "/" + n;
        struct stat st;
        if (!session::is_locked(p) && ::lstat(p.c_str(), &st) == 0 && ::time(nullptr) - st.st_ctime > 60)
            stale.push_back(p);
    }
    ::closedir(d);
    for (const auto& p : stale) (void)remove_tree_fast(p);
}
