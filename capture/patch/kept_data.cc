#include "capture/patch/kept_data.h"

#include <sys/mman.h>

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

namespace capture {

namespace {
constexpr uint64_t kHuge = uint64_t{2} << 20;
// How far ahead of what is kept the pages are faulted in: two huge pages.
constexpr uint64_t kAheadBytes = 2 * kHuge;
}  // namespace

// Faults the mapping's pages in (MADV_POPULATE_WRITE) a little ahead of
// what validation copies into it, on a thread of its own: the kernel's
// zeroing of each huge page then happens beside validation, which keeps a
// CPU busy by itself, instead of inside its copy (~7% of a 10,000-file
// apply's samples). The pages are the ones validation writes next anyway.
struct KeptData::Ahead {
    std::mutex mu;
    std::condition_variable cv;
    uint64_t want = 0;
    bool stop = false;
    std::thread t;

    Ahead(char* base, uint64_t budget) {
        t = std::thread([this, base, budget] {
            uint64_t done = 0;
            for (;;) {
                uint64_t to;
                {
                    std::unique_lock<std::mutex> l(mu);
                    cv.wait(l, [&] { return stop || want > done; });
                    if (stop) return;
                    to = std::min(want, budget);
                }
                // On a kernel without it (before 5.14) the pages come as written.
                if (::madvise(base + done, to - done, MADV_POPULATE_WRITE) != 0) return;
                done = to;
            }
        });
    }
    void ask(uint64_t to) {
        {
            std::lock_guard<std::mutex> l(mu);
            want = to;
        }
        cv.notify_one();
    }
    ~Ahead() {
        {
            std::lock_guard<std::mutex> l(mu);
            stop = true;
        }
        cv.notify_one();
        t.join();
    }
};

KeptData::KeptData(uint64_t budget) : budget_(budget) {}

KeptData::KeptData(KeptData&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)),
      budget_(std::exchange(o.budget_, 0)),
      used_(std::exchange(o.used_, 0)),
      asked_(std::exchange(o.asked_, 0)),
      ahead_(std::move(o.ahead_)) {}

KeptData& KeptData::operator=(KeptData&& o) noexcept {
    if (this != &o) {
        release();
        base_ = std::exchange(o.base_, nullptr);
        budget_ = std::exchange(o.budget_, 0);
        used_ = std::exchange(o.used_, 0);
        asked_ = std::exchange(o.asked_, 0);
        ahead_ = std::move(o.ahead_);
    }
    return *this;
}

KeptData::~KeptData() { release(); }

void KeptData::release() {
    ahead_.reset();  // stopped before its pages go
    if (base_) ::munmap(base_, budget_);
    base_ = nullptr;
}

void KeptData::settle() { ahead_.reset(); }

int64_t KeptData::reserve(uint64_t n) {
    if (n == 0 || n > kMemberMax || n > budget_ - used_) return -1;
    if (!base_) {
        // Address space only: pages come as they are written (or faulted
        // in just ahead), so what is kept is about what is used. Huge
        // pages: a 4 KiB page fault per 4 KiB file cost more than decoding
        // it again did.
        void* p = ::mmap(nullptr, budget_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            budget_ = 0;
            return -1;
        }
        base_ = static_cast<char*>(p);
        ::madvise(base_, budget_, MADV_HUGEPAGE);
        try {
            ahead_ = std::make_unique<Ahead>(base_, budget_);
        } catch (const std::system_error&) {
            // no thread to be had: the pages are faulted in as written
        }
    }
    auto off = static_cast<int64_t>(used_);
    used_ += n;
    // Never past the mapping: asked for more than it holds, the thread
    // found more to do each time it looked and faulted in nothing, a CPU
    // spinning for the rest of validation once 44 MiB were kept (attack51).
    if (ahead_ && asked_ < budget_ && used_ + kAheadBytes > asked_) {
        asked_ = std::min(budget_, (used_ + kAheadBytes + kHuge - 1) / kHuge * kHuge);
        ahead_->ask(asked_);
    }
    return off;
}

}  // namespace capture
