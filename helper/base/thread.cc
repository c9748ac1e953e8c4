#include "helper/base/thread.h"

namespace base {

void* StackThread::run(void* self) {
    static_cast<StackThread*>(self)->fn_();
    return nullptr;
}

bool StackThread::start(std::function<void()> fn, size_t stack) {
    join();
    fn_ = std::move(fn);
    pthread_attr_t attr;
    ::pthread_attr_init(&attr);
    ::pthread_attr_setstacksize(&attr, stack);
    running_ = ::pthread_create(&th_, &attr, &StackThread::run, this) == 0;
    ::pthread_attr_destroy(&attr);
    return running_;
}

void StackThread::join() {
    if (running_) ::pthread_join(th_, nullptr);
    running_ = false;
}

void run_halves(const std::function<bool()>& first, const std::function<void()>& second) {
    StackThread helper;
    bool apart = helper.start(second);
    bool ok = first();
    helper.join();
    if (!apart && ok) second();
}

}  // namespace base
