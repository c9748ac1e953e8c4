// A thread with a big stack: the tree walks recurse once per directory
// level, and a 5000-deep tree needs more than the default 8 MiB. Untouched
// stack pages cost no memory. Joined by its destructor.
#pragma once
#include <pthread.h>

#include <cstddef>
#include <functional>

namespace base {

class StackThread {
public:
    static constexpr size_t kBigStack = size_t{1} << 30;
    StackThread() = default;
    ~StackThread() { join(); }
    StackThread(const StackThread&) = delete;
    StackThread& operator=(const StackThread&) = delete;
    // Runs fn on a new thread; false (fn not run) when none can be made.
    bool start(std::function<void()> fn, size_t stack = kBigStack);
    void join();

private:
    static void* run(void* self);
    std::function<void()> fn_;
    pthread_t th_{};
    bool running_ = false;
};

// The two halves of a split walk: `second` on a big-stack thread while
// `first` runs here; without a thread, `second` runs here after `first`,
// unless `first` failed (returned false).
void run_halves(const std::function<bool()>& first, const std::function<void()>& second);

}  // namespace base
