// The checkpoint, rollback, revert and fork of a running session, served by
// its supervisor one request at a time (helper/sandbox/ipc/control.h;
// docs/history.md, "The freeze rule" and "A running session"):
//   0. refused while the rename worker copies a directory (it writes in
//      the upper, and a read-only overlay would leave its copy half-made);
//   1. setup remounts the overlay read-only: the kernel refuses (EBUSY)
//      while a file on it is open for writing; then the error names the
//      processes and paths, and nothing changed;
//   2. a process with its working directory or an open directory on it
//      would stay on the frozen mount: refused the same way, remounted
//      read-write again; then the temporary dirs of a rename worker that
//      died are swept from the live upper (RenameService::sweep_upper);
//   3. the layers change on disk as for a kept session (the live upper
//      frozen as the next step, steps::freeze_live; or steps::rollback,
//      rollback_undo; or `layover revert` run as a child), as its owner;
//   4. setup mounts the stack now on disk over the target in one
//      move_mount, which propagates into the command's namespace. When step
//      3 failed before its commit, the overlay is remounted read-write: the
//      session is exactly as before; when after, the new stack is mounted.
// Fault points (LAYOVER_FAULT, helper/base/fault.h): live:readonly after 1-2,
// live:changed after 3, live:mounted after 4.
#pragma once
#include <sys/types.h>

#include <string>

#include "helper/base/result.h"
#include "helper/sandbox/ipc/control_msg.h"

struct PreparedRun;
class RenameService;

class LiveCheckpoint {
public:
    // fd: the supervisor's end of the requests to setup (helper/sandbox/live/live_freeze.h).
    LiveCheckpoint(PreparedRun& run, int fd) : run_(run), fd_(fd) {}
    // One request; init is the sandbox's init (host pid), -1 before it runs.
    control::Reply serve(const control::Request& req, pid_t init);
    // The run's directory renames: none held while one is copied, and what
    // a worker that died left swept from the live upper before it is frozen.
    void set_renames(RenameService* r) { renames_ = r; }

private:
    // What says whether the stack on disk changed: the step count and the
    // live upper's inode (the mounted overlay's upper while nothing changed).
    struct Stack {
        int count = -1;
        ino_t upper = 0;
        bool operator==(const Stack& o) const { return count == o.count && upper == o.upper; }
    };
    // Steps 1-2: "" once the overlay is read-only and nobody stays behind,
    // else the refusal (the overlay read-write again).
    std::string hold(pid_t init, const std::string& verb);
    control::Reply release(const std::string& msg);
    Stack stack() const;
    // Step 4 for whatever is on disk now: the live changes frozen first (or
    // an empty upper set aside when it is the mounted one), a fresh work dir.
    base::Result<void> mount_disk(const Stack& held);
    // After step 3 failed: remounted read-write when nothing changed, else
    // the changed stack mounted. The refusal, naming what happened.
    control::Reply settle(const Stack& held, const std::string& msg);
    // Step 4 after step 3 committed: `done` once mounted.
    control::Reply mount_changed(const Stack& held, const control::Reply& done);
    control::Reply checkpoint(const std::string& label, pid_t init, const std::string& verb = "checkpoint");
    control::Reply rollback(const control::Request& req, pid_t init);  // rollback and undo: live_history.cc
    control::Reply revert(const control::Request& req, pid_t init);
    control::Reply fork(const control::Request& req, pid_t init);

    PreparedRun& run_;
    int fd_;
    RenameService* renames_ = nullptr;
};

namespace live {
// A work dir name under SESSION/work not taken yet: BASE, else BASE.1, ...
// (a dir of an earlier mount is in use; anything else there is an error).
base::Result<std::string> fresh_work(const std::string& session_dir, const std::string& base);
}  // namespace live
