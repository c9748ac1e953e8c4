#include "helper/store/records/owner_ns.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "helper/base/child.h"
#include "helper/base/fd.h"
#include "helper/base/thread.h"
#include "helper/store/records/userns.h"

namespace capture {

namespace {

void on_big_stack(const std::function<void()>& fn) {
    base::StackThread t;
    if (!t.start(fn)) fn();  // no thread: run on the normal stack
}

// The kernel grows a process's fd table by copying it, and once threads
// share the table every growth waits for an RCU grace period (milliseconds
// each on a busy machine). save's walk thread keeps thousands of files open:
// grow the table now, while single-threaded, where growing is cheap.
void reserve_fd_table(rlim_t limit) {
    constexpr long kReserve = 16384;
    long want = std::min<long>(static_cast<long>(std::min<rlim_t>(limit, kReserve)), kReserve) - 1;
    int any = ::open("/", O_PATH | O_CLOEXEC);
    if (any < 0) return;
    int high = want > any ? ::fcntl(any, F_DUPFD_CLOEXEC, want) : -1;
    if (high >= 0) ::close(high);
    ::close(any);
}

void become_owner() {
    // Without a user namespace (disabled by the admin) the walk still runs
    // as the caller; only entries made unreadable inside would then fail.
    (void)userns::enter_owner_ns();
    // Deep trees keep one dir fd open per level on each side.
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &rl);
    }
}

void become_owner_keeping_files() {
    become_owner();
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) reserve_fd_table(rl.rlim_cur);
}

}  // namespace

base::Result<std::string> in_owner_ns(const std::function<base::Result<std::string>()>& fn) {
    return in_owner_ns(fn, nullptr);
}

base::Result<std::string> in_owner_ns(const std::function<base::Result<std::string>()>& fn,
                                      const std::function<base::Result<void>()>& then) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return base::sys_error("pipe");
    base::Fd rd(p[0]), wr(p[1]);
    auto child = base::spawn([&]() -> int {
        rd.reset();
        become_owner_keeping_files();
        std::string msg;
        on_big_stack([&] {
            auto r = fn();
            msg = r ? "O" + r.value() : "E" + r.error().message;
        });
        bool sent = base::write_all(wr.get(), msg.data(), msg.size()).ok();
        // The end of the message now, not once the exit has torn down this
        // process's memory and files: the parent's `then` overlaps that.
        wr.reset();
        return sent ? 0 : 1;
    });
    if (!child) return child.error();
    wr.reset();
    auto out = base::read_all(rd.get(), SIZE_MAX);
    base::Result<void> after = base::Ok();
    // A message cut short by a dying child also starts with 'O': the exit
    // status below still fails it, and `then` must be harmless for it.
    if (then && out && !out->empty() && (*out)[0] == 'O') after = then();
    TRY(int status, child->wait());
    if (!out) return out.error();
    const std::string& msg = out.value();
    if (msg.empty() || base::exit_code_of(status) != 0) {
        if (!msg.empty() && msg[0] == 'E') return base::error(msg.substr(1));
        return base::error("the capture process died (exit " + std::to_string(base::exit_code_of(status)) + ")");
    }
    if (msg[0] == 'E') return base::error(msg.substr(1));
    if (!after) return after.error();
    return msg.substr(1);
}

base::Result<void> as_owner_here(const std::function<base::Result<void>()>& fn) {
    become_owner();
    base::Result<void> r = base::Ok();
    on_big_stack([&] { r = fn(); });
    return r;
}

}  // namespace capture
