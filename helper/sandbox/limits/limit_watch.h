// --timeout, --max-size and --min-free, enforced by the supervisor from
// outside the sandbox, which cannot starve it. Once one is reached the whole sandbox
// is stopped (SIGKILL to init, whose exit makes the kernel kill its PID
// namespace, and to setup) and the session is kept (helper/cli/session/run.cc).
#pragma once
#include <sys/types.h>

#include <cstdint>
#include <string>

#include "helper/base/child.h"
#include "helper/base/fd.h"
#include "helper/sandbox/limits/limits.h"

// How long the size watch waits after a walk that took walk_ms and found
// `used` bytes of `cap`: as long as a writer at kAssumedWriteRate needs to
// fill half the room left, but never less than kMinSizeInterval nor
// kSizeCostFactor times the walk (the walks take at most 1/kSizeCostFactor
// of a CPU however big the layer grows), and never more than
// kMaxSizeInterval (or that multiple of the walk) far below the cap.
constexpr int64_t kMinSizeInterval = 25;
constexpr int64_t kMaxSizeInterval = 250;
constexpr int64_t kSizeCostFactor = 10;
constexpr uint64_t kAssumedWriteRate = 1 << 20;  // bytes per ms: 1 GiB/s
int64_t next_size_interval(int64_t walk_ms, uint64_t used, uint64_t cap);

class LimitWatch {
public:
    // With --max-size, forks the size watch: a process in the owner user
    // namespace (the command may make mode-000 dirs) that walks upper_dir
    // and reports each total on a pipe.
    // `frozen`: the session's other layers (its steps, what a rollback set
    // aside), measured once and counted in each total. `scratch`: the
    // scratch layers' upper dirs (writes outside the target), walked with
    // upper_dir each time: the cap is the session's whole disk use (attack17).
    LimitWatch(const Limits& l, const std::string& upper_dir, std::vector<std::string> frozen = {},
               const std::vector<std::string>& scratch = {});
    // The fd to poll with the others (-1: none): wakes the loop on a report.
    int fd() const { return reports_.get(); }
    // --min-free (helper/sandbox/limits/disk_floor.h) needs no process: check()
    // looks at the free space and inodes (one statvfs) when it is due, as
    // often as next_size_interval says for the room above the floors
    // (disk_floor::room: 25-250 ms).
    // The poll timeout until the time limit or that look (-1: none).
    int poll_timeout() const;
    // Non-empty once a limit is reached: the message; *code is run's exit code.
    std::string check(int* code);
    // Setup reported init's pid: hold a pidfd, so that stop() can wait for
    // the end of the whole PID namespace.
    void track_init(pid_t init);
    // The caller's end of the IPC socket (--ipc-fd: the Python bindings,
    // `layover mcp`) closed: the caller is gone. A REPL that reads the end
    // of its socket exits at once; one busy in the agent's code never reads
    // it, and the sandbox would run on alone until --timeout (24 h by
    // default). check() stops it kCallerGraceMs after this.
    void caller_gone();
    static constexpr int64_t kCallerGraceMs = 5000;
    // SIGKILL init (setup that was: one process); the caller still reaps it.
    void stop(pid_t setup);
    // After stop() and setup's end: wait (at most ~10 s) until init is gone.
    // The kernel lets a PID namespace's init finish exiting only once every
    // other process in it is gone, so nothing of the sandbox still writes.
    void wait_stopped();

private:
    std::string read_reports(int* code);
    std::string look_free(int* code);
    bool layered_ = false;  // the totals count frozen or scratch layers too
    Limits limits_;
    int64_t start_;
    int64_t caller_gone_ = -1;  // when caller_gone() was called (ms), -1: not
    int64_t next_look_ = -1;    // when --min-free's next statvfs is due (ms)
    base::Fd reports_, init_;
    base::Child watcher_;
    std::string partial_;
};
