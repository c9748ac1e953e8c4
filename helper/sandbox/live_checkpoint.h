// The checkpoint of a running session, served by its supervisor
// (helper/sandbox/control.h; docs/history.md, "The freeze rule"):
//   1. setup remounts the overlay read-only: the kernel refuses (EBUSY)
//      while a file on it is open for writing; then the error names the
//      processes and paths, and nothing changed;
//   2. a process with its working directory or an open directory on it
//      would stay on the frozen mount: refused the same way, remounted
//      read-write again;
//   3. the live upper is frozen as the next step (steps::freeze_live, as
//      its owner), and a fresh work dir made;
//   4. setup mounts the next overlay over the target in one move_mount,
//      which propagates into the command's namespace. On failure the step
//      is taken back (the rename undone) and the overlay remounted
//      read-write: the session is exactly as before.
#pragma once
#include <sys/types.h>

#include "helper/sandbox/control_msg.h"

struct PreparedRun;

class LiveCheckpoint {
public:
    // fd: the supervisor's end of the requests to setup (helper/sandbox/live_freeze.h).
    LiveCheckpoint(PreparedRun& run, int fd) : run_(run), fd_(fd) {}
    // One request; init is the sandbox's init (host pid), -1 before it runs.
    control::Reply serve(const control::Request& req, pid_t init);

private:
    PreparedRun& run_;
    int fd_;
};
