#include "capture/owner_ns.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <pthread.h>

#include <cerrno>

#include "helper/base/child.h"
#include "helper/base/fd.h"
#include "helper/userns.h"

namespace capture {

namespace {

struct Job {
    const std::function<base::Result<std::string>()>* fn;
    std::string msg;
};

void* run_job(void* arg) {
    auto* job = static_cast<Job*>(arg);
    auto r = (*job->fn)();
    job->msg = r ? "O" + r.value() : "E" + r.error().message;
    return nullptr;
}

// The walk recurses once per directory level; a 5000-deep tree needs more
// than the default 8 MiB stack. Untouched stack pages cost no memory.
constexpr size_t kWalkStack = size_t{1} << 30;

}  // namespace

base::Result<std::string> in_owner_ns(const std::function<base::Result<std::string>()>& fn) {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return base::sys_error("pipe");
    base::Fd rd(p[0]), wr(p[1]);
    auto child = base::spawn([&]() -> int {
        rd.reset();
        // Without a user namespace (disabled by the admin) the walk still runs
        // as the caller; only entries made unreadable inside would then fail.
        (void)userns::enter_owner_ns();
        // Deep trees keep one dir fd open per level on each side.
        struct rlimit rl;
        if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
            rl.rlim_cur = rl.rlim_max;
            ::setrlimit(RLIMIT_NOFILE, &rl);
        }
        Job job{&fn, ""};
        pthread_attr_t attr;
        pthread_t th;
        ::pthread_attr_init(&attr);
        ::pthread_attr_setstacksize(&attr, kWalkStack);
        if (::pthread_create(&th, &attr, run_job, &job) == 0) {
            ::pthread_join(th, nullptr);
        } else {
            run_job(&job);  // no thread: run on the normal stack
        }
        ::pthread_attr_destroy(&attr);
        return base::write_all(wr.get(), job.msg.data(), job.msg.size()) ? 0 : 1;
    });
    if (!child) return child.error();
    wr.reset();
    auto out = base::read_all(rd.get(), SIZE_MAX);
    TRY(int status, child->wait());
    if (!out) return out.error();
    const std::string& msg = out.value();
    if (msg.empty() || base::exit_code_of(status) != 0) {
        if (!msg.empty() && msg[0] == 'E') return base::error(msg.substr(1));
        return base::error("the capture process died (exit " + std::to_string(base::exit_code_of(status)) + ")");
    }
    if (msg[0] == 'E') return base::error(msg.substr(1));
    return msg.substr(1);
}

}  // namespace capture
