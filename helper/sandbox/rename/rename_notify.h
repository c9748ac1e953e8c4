// The supervisor's side of directory renames (docs/design.md, "Directory
// renames"). The child's filter hands rename, renameat and renameat2 to a
// listener, passed up as [sync 5]. For each call:
//   1. read the two paths once from the task's memory;
//   2. a source that is not a directory (or RENAME_EXCHANGE): answer
//      CONTINUE, the kernel runs the call as the task, with its own rights
//      (the stat only picks the fast path; it decides nothing about safety);
//   3. else take the task's dirfds (pidfd_getfd, /proc/PID/cwd), check that
//      the notification is still live (the pid was not reused), and hand the
//      paths as read plus the fds to the rename worker (rename_worker.h),
//      which answers with the errno the task gets.
// A kept session's renames of files and its links (link, linkat, also
// notified) go to the worker too, on the dir resolved to note the name they
// make (helper/sandbox/rename/rename_note.cc); a discarded session's: CONTINUE.
// The supervisor's loop polls listener() and worker() and calls the handlers.
#pragma once
#include <sys/types.h>

#include <cerrno>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "helper/base/fd.h"
#include "helper/sandbox/limits/limits.h"
#include "helper/sandbox/rename/rename_worker.h"
#include "helper/store/session/first_copies.h"

// The child's side, last before exec: the deny table plus, with notify, the
// notified renames and the listener sent up [sync 5] (and closed here).
// Without notify (a kernel without user notification) the table alone and a
// warning [sync 3].
base::Result<void> install_filter(int sync_fd, bool notify);
// Compile the notifying filter now (setup, before it starts the child, while it
// waits for the session's dirs): the child inherits it and install_filter()
// only loads it. Without it (or when it failed) install_filter() compiles.
void precompile_filter(bool notify);

// A pidfd of the task a notification names (a thread's id: pidfd_open
// refuses one that leads no thread group without PIDFD_THREAD, Linux 6.9;
// before it, its thread group's, whose fd table its threads share). -1: gone.
int task_pidfd(pid_t tid);

// Whether the supervisor's own open just failed for want of fds (EMFILE,
// ENFILE): the call then gets ENOMEM, as past the backlog's bound, never
// the ENOENT or EBADF of a path or fd the task got wrong (attack32: with
// the dirfds of the calls the worker holds, a flood passed a soft
// RLIMIT_NOFILE of 1024 and renames of existing dirs said ENOENT).
inline bool out_of_fds() { return errno == EMFILE || errno == ENFILE; }

class RenameService {
public:
    explicit RenameService(const Limits& limits) : limits_(limits) {}
    ~RenameService();

    void set_listener(base::Fd fd);
    int listener() const { return listener_.get(); }  // -1: none
    int worker() const { return worker_ ? worker_->sock.get() : -1; }

    // revents of listener(): one notification, answered or handed on.
    void on_listener(short revents);
    // revents of worker(): one answer passed to its task.
    void on_worker(short revents);
    // A kept session's: each file a rename or link replaces in the target's
    // live upper layer has its birth noted first, and each name a rename or
    // a link makes is noted (helper/store/session/first_copies.h).
    // since_ns: a time before the command could start.
    void note_copies(const std::string& session_dir, const std::string& target, int64_t since_ns);
    // The session whose dir keeps the key of the worker's temporary names
    // (rename-temps), kept or discarded: a discarding run's supervisor
    // SIGKILLed leaves its session (crashed, reviewable), whose leftovers a
    // later sweep must recognise.
    void set_session(const std::string& session_dir) { session_dir_ = session_dir; }
    // Whether the worker holds a call (it may be writing in the upper).
    bool copying() const { return !pending_.empty(); }
    // Under the freeze rule (the overlay read-only, nothing copying): the
    // live upper swept of what a worker that died with a call in hand left,
    // before a step freezes it (docs/design.md, "Directory renames").
    void sweep_upper();

private:
    void respond(uint64_t id, int err, bool cont);
    // A link or linkat: noted, then made by the worker (a kept session's).
    void on_link(pid_t pid, uint64_t id, const rename_call::Args& link);
    // The entry `path` (from the task's `dirfd`) names, if the live upper
    // holds it (helper/sandbox/rename/rename_note.cc). 0, or the errno the call
    // gets instead of running (EXDEV: the entry cannot be told, or noted).
    // *at, *entry: where the call is to act (at invalid: as the task asked).
    int note_replaced(pid_t pid, int dirfd, const std::string& path, base::Fd* at, std::string* entry);
    // req to the worker (started on first need), with its dirfds.
    void hand_on(pid_t pid, rename_call::Request& req, base::Fd olddir, base::Fd newdir);
    // The backlog sent, in order, while the worker's socket takes it.
    void flush_backlog();
    // A worker for the task pid's call id, in that task's namespaces; false:
    // none could be started (the call then gets EXDEV).
    bool start_worker(pid_t pid, uint64_t id, uint64_t mntns);
    void stop_worker();
    // The worker died (killed, the OOM killer; its hang-up read, or a send
    // to it failed, attack32): a successor removes, through
    // the overlay, the copy the call in hand may have left half-made, before
    // that call gets EXDEV, so that nothing in the sandbox sees, changes or
    // moves things into it (recovery2: `git add -A` took it into the index,
    // a dir moved into it was lost with it at the run's end's sweep).
    void worker_died();
    // The run's end: the worker stopped; its temporary dirs a dead worker
    // left (a call in hand) swept from a kept session's layers.
    void finish_temps();

    Limits limits_;
    // The key of the worker's temporary names (helper/store/records/rename_temps.h):
    // a kept session's is in its dir from the first worker on.
    std::string temps_key_;
    bool temps_inherited_ = false;  // the key file was an earlier run's: its leftovers may wait
    bool temps_left_ = false;       // a worker was stopped with a call in hand
    bool upper_dirty_ = false;      // ... since the live upper was last swept (sweep_upper)
    base::Fd listener_;
    std::unique_ptr<rename_worker::Worker> worker_;
    uint64_t worker_mntns_ = 0;   // inode of the mount namespace it joined
    std::set<uint64_t> pending_;  // ids handed to the worker, not yet answered
    // Requests the worker's socket had no room for (it is busy, copying a
    // directory, and the sandbox made more calls than the socket holds): sent
    // as it answers. Before, a full socket stopped the worker and let every
    // waiting call run as the task asked, the kernel resolving its paths
    // again (attack19: the race of a link or rename swapped between dirs,
    // reopened at will by a few dozen threads, and a directory move cut off
    // midway, EXDEV). Bounded: past kMaxBacklog a call fails with ENOMEM.
    struct Queued {
        uint64_t id;
        std::string msg;
        base::Fd olddir, newdir;
        pid_t pid = 0;          // the task waiting in the call
        bool may_copy = false;  // a directory rename the worker may copy (a temporary dir)
        bool sweep = false;     // sent to a successor, to remove what its predecessor left
    };
    std::deque<Queued> backlog_;
    // pending_'s calls that may copy, kept (two fds each) for worker_died();
    // past kMaxSent (a flood of calls while one copies) the run's end sweeps.
    std::map<uint64_t, Queued> sent_;
    static constexpr size_t kMaxSent = 256;
    static constexpr size_t kMaxBacklog = 256;  // two fds each
    void* req_ = nullptr;                       // libseccomp's notification buffers
    void* resp_ = nullptr;
    std::string session_dir_, target_;       // note_copies: empty, none noted
    std::unique_ptr<session::Notes> notes_;  // null: none noted
    // A cache, so as not to note a name twice (a name noted again costs a
    // line of the notes): emptied past kMaxCached bytes. Before, it grew with
    // every distinct name, outside the sandbox's limits (attack20: 243 MB of
    // the supervisor's after 60,000 renames to ~4 KB names).
    std::map<std::string, int64_t> noted_;  // path -> the earliest noted
    std::set<std::string> made_;            // names made by renames and links, noted
    size_t cached_ = 0;                     // bytes held by both, about
    static constexpr size_t kMaxCached = size_t{8} << 20;
    void cache_more(size_t bytes);
    uint64_t live_ino_ = 0;  // the live upper whose start is live_start_
    int64_t live_start_ = 0;
};
