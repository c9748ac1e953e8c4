// Durability of apply's own writes, without syncing the whole filesystem.
// Staging starts writeback as it writes (so the final wait is short), then
// fsyncs exactly the entries it made: each staged file and directory (held
// open, since a staged entry may already carry mode 0000), and each existing
// directory that received a staged name. A transaction that touches more
// entries than kMaxEntries is flushed with one syncfs instead: past that,
// per-entry fsyncs (each a device flush) cost more than one journal commit.
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "review/txn/fsops.h"

namespace review {

// Ask the kernel to start writing [from, to) of fd out (asynchronously, no
// wait): the later fsync then finds most of the data already on disk.
void start_writeback(int fd, uint64_t from, uint64_t to);

class Durability {
public:
    static constexpr size_t kMaxEntries = 64;

    // An entry we created and may no longer be able to reopen: keep a dup of fd.
    void keep(int fd);
    // A directory (relative to the root, "" = the root) that gained or lost names.
    void dir(const std::string& rel);
    // An existing entry whose metadata changed in place (symlinks and fifos
    // cannot be fsynced; their directory's fsync covers them).
    void node(const std::string& rel);

    // fsync everything recorded (or syncfs the root's filesystem when too
    // many), then forget it. Errors (EIO, ENOSPC) are returned.
    base::Result<void> flush(int root, DirCache& dirs);
    bool whole_fs() const { return overflow_; }

private:
    void grow();
    std::mutex mu_;  // staging's file writers record from their own threads
    std::vector<base::Fd> fds_;
    std::set<std::string> dirs_, nodes_;
    std::atomic<bool> overflow_{false};  // read by EarlyFlush's thread
};

// While a large staging runs (one that will end in a syncfs), write the
// filesystem's dirty data back in a second thread every kPeriodMs, so the
// syncfs before commit finds little left and the disk works while staging
// does. Advisory only: the final flush still syncs and reports. It syncs
// through its own open of the root, not the root fd: a writeback error is
// reported once per open file, and must stay for the final syncfs to report.
class EarlyFlush {
public:
    static constexpr int kPeriodMs = 30;
    EarlyFlush(int root, const Durability& dur);
    EarlyFlush(const EarlyFlush&) = delete;
    EarlyFlush& operator=(const EarlyFlush&) = delete;
    ~EarlyFlush() { stop(); }
    void stop();  // waits for a syncfs under way

private:
    base::Fd fd_;
    std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    std::thread t_;
};

}  // namespace review
