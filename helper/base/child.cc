#include "helper/base/child.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace base {

Child& Child::operator=(Child&& o) noexcept {
    if (this != &o) {
        Child old(pid_);
        pid_ = o.release();
    }
    return *this;
}

Child::~Child() {
    if (pid_ > 0) {
        ::kill(pid_, SIGKILL);
        while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
    }
}

pid_t Child::release() {
    pid_t p = pid_;
    pid_ = -1;
    return p;
}

Result<int> Child::wait() {
    int status = 0;
    for (;;) {
        pid_t r = ::waitpid(pid_, &status, 0);
        if (r == pid_) break;
        if (r < 0 && errno == EINTR) continue;
        return sys_error("waitpid");
    }
    pid_ = -1;
    return status;
}

Result<Child> spawn(const std::function<int()>& fn) {
    pid_t pid = ::fork();
    if (pid < 0) return sys_error("fork");
    if (pid == 0) ::_exit(fn());
    return Child(pid);
}

int exit_code_of(int st) {
    if (WIFEXITED(st)) return WEXITSTATUS(st);
    if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
    return 125;
}

}  // namespace base
