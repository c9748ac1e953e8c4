// A forked child that is killed (SIGKILL) and reaped unless it was waited for
// or released, so no half-built child outlives a failed set-up.
#pragma once
#include <sys/types.h>

#include <functional>

#include "helper/base/result.h"

namespace base {

class Child {
public:
    Child() = default;
    explicit Child(pid_t pid) : pid_(pid) {}
    Child(Child&& o) noexcept : pid_(o.release()) {}
    Child& operator=(Child&& o) noexcept;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    pid_t pid() const { return pid_; }
    pid_t release();
    // Wait (retrying on EINTR) and return the raw wait status.
    Result<int> wait();

private:
    pid_t pid_ = -1;
};

// fork(); the child runs fn and _exits with its return value (never returns).
Result<Child> spawn(const std::function<int()>& fn);

// Exit code as shells report it: the status, or 128+N for signal N.
int exit_code_of(int wait_status);

}  // namespace base
