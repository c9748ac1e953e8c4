// The upper layer's flush. The overlay is mounted `volatile` (nothing the
// command writes is synced), and a kept session must be durable before run
// returns: one `syncfs` of the upper's filesystem, started once the command
// has exited. That syncfs writes back everything dirty on the filesystem,
// the command's minutes of writes included, while run waits. So, while the
// command runs, a thread looks at the filesystem's free space and inodes
// every so often and, when they moved, writes the filesystem back at once
// (an early `syncfs`, on the disk's time, not the command's): the exit's
// syncfs then finds little left. An idle session makes no early syncfs
// (each one flushes the disk's write cache), and looks less often.
// docs/design.md, "The upper layer's flush".
#pragma once
#include <cstdint>
#include <memory>
#include <string>

// What the filesystem holds free, from statfs.
struct FsFree {
    uint64_t bytes = 0;
    uint64_t inodes = 0;
};

// An early syncfs is due once free space or inodes moved this much (either
// way: deletions leave dirty metadata too) since the last look after a
// flush. Below that, the exit's syncfs is quick anyway.
constexpr uint64_t kFlushMinBytes = uint64_t{4} << 20;
constexpr uint64_t kFlushMinInodes = 256;
bool flush_due(const FsFree& since, const FsFree& now);

// The early syncfs's writeback is done by the kernel's flusher threads
// (block allocation, I/O submission: ~1 s of CPU for 150 MB in 30,000
// files here). On a core the command does not use it is free; with every
// core busy it takes CPU from the command as much as it saves at the exit.
// So an early syncfs also needs a quarter of a CPU left idle since the last
// look, from /proc/stat's "cpu" line (idle + iowait against all, in ticks):
// a machine with every core busy gets the exit's syncfs alone, as before.
struct CpuTicks {
    uint64_t idle = 0;
    uint64_t total = 0;
};
bool parse_cpu_ticks(const std::string& proc_stat, CpuTicks* out);
bool cpu_free(const CpuTicks& before, const CpuTicks& now, unsigned ncpu);

// The next look, `period_ms` after this one: kFlushPeriodMs after a look
// that found the filesystem moving; doubled after a quiet one, up to
// kFlushIdleMs (an idle session wakes rarely).
constexpr int kFlushPeriodMs = 250;
constexpr int kFlushIdleMs = 1000;
int next_flush_period(int period_ms, bool moved);

class UpperFlush {
public:
    UpperFlush();
    ~UpperFlush();  // stop(): no final syncfs
    UpperFlush(UpperFlush&&) noexcept;
    UpperFlush& operator=(UpperFlush&&) noexcept;

    // Starts the watching thread (every signal blocked in it) on the
    // filesystem of `dir` (the session dir). False: no thread (no fd or
    // none could be made); finish() then does nothing, and wait() says so.
    bool start(const std::string& dir);
    // The command has exited: the thread stops watching and starts the
    // final syncfs (after an early one it is in, if any). Returns at once.
    void finish();
    // finish(), then wait for the final syncfs. True when it ran (error()
    // then says how it ended); false: the caller syncs itself.
    bool wait();
    int error() const;  // the final syncfs's errno, 0 when it succeeded
    // Stop without the final syncfs (waits for an early one under way).
    void stop();

private:
    struct State;
    void end(bool final_sync);
    std::unique_ptr<State> s_;
};
