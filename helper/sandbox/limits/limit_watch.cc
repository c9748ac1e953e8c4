#include "helper/sandbox/limits/limit_watch.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "helper/store/records/owner_ns.h"
#include "helper/store/records/usage.h"

namespace {

int64_t now_ms() {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void sleep_ms(int64_t ms) {
    struct timespec ts = {static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000};
    while (::nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

// The size watch's loop: one line "BYTES COMPLETE\n" per walk (one write,
// shorter than PIPE_BUF, so the supervisor never reads half of one).
// `live`: the upper layer and the scratch layers (what the command writes
// outside the target counts too: attack17), each walked every time.
[[noreturn]] void watch_sizes(const std::vector<std::string>& live, const std::vector<std::string>& frozen,
                              uint64_t cap, int out) {
    (void)capture::as_owner_here([&]() -> base::Result<void> {
        uint64_t below = 0;  // frozen layers never change: measured once
        for (const auto& f : frozen) {
            int fd = ::open(f.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd >= 0) below += session::tree_usage(fd).bytes;
        }
        for (;;) {
            int64_t t0 = now_ms();
            session::Usage u;
            for (size_t i = 0; i < live.size(); i++) {
                int fd = ::open(live[i].c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (fd < 0) {
                    if (i == 0) u.complete = false;  // the upper layer; a scratch layer may not exist yet
                    continue;
                }
                session::Usage one = session::tree_usage(fd);
                u.bytes += one.bytes;
                u.complete = u.complete && one.complete;
            }
            std::string line = std::to_string(u.bytes + below) + (u.complete ? " 1\n" : " 0\n");
            if (::write(out, line.data(), line.size()) < 0) ::_exit(0);  // the supervisor is gone
            sleep_ms(next_size_interval(now_ms() - t0, u.bytes, cap));
        }
    });
    ::_exit(1);
}

}  // namespace

int64_t next_size_interval(int64_t walk_ms, uint64_t used, uint64_t cap) {
    int64_t lo = std::max(kMinSizeInterval, kSizeCostFactor * walk_ms), hi = std::max(kMaxSizeInterval, lo);
    uint64_t room = used < cap ? cap - used : 0;
    return std::clamp(static_cast<int64_t>(std::min<uint64_t>(room / 2 / kAssumedWriteRate, INT64_MAX / 2)), lo, hi);
}

LimitWatch::LimitWatch(const Limits& l, const std::string& upper_dir, std::vector<std::string> frozen,
                       const std::vector<std::string>& scratch)
    : limits_(l), start_(now_ms()) {
    next_look_ = start_ + kMinSizeInterval;  // prepare_run looked at start
    layered_ = !frozen.empty() || !scratch.empty();
    std::vector<std::string> live = {upper_dir};
    live.insert(live.end(), scratch.begin(), scratch.end());
    if (!l.max_size) return;
    int p[2];
    if (::pipe2(p, O_CLOEXEC | O_NONBLOCK) != 0) return;  // check() then stops the sandbox
    reports_.reset(p[0]);
    pid_t parent = ::getpid();
    auto child = base::spawn([&]() -> int {
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) return 1;
        // Nothing of the supervisor's: above all not the session lock, which
        // must be free once the run ends.
        base::close_fds_except({2, p[1]});
        ::fcntl(p[1], F_SETFL, 0);  // blocking writes
        watch_sizes(live, frozen, l.max_size, p[1]);
    });
    ::close(p[1]);
    if (child) watcher_ = std::move(child.value());
}

int LimitWatch::poll_timeout() const {
    // The nearest deadline: --timeout's, the caller's grace (-1: none).
    int64_t deadline = limits_.timeout_ms ? start_ + static_cast<int64_t>(limits_.timeout_ms) : -1;
    auto nearer = [&](int64_t t) { deadline = deadline < 0 ? t : std::min(deadline, t); };
    if (caller_gone_ >= 0) nearer(caller_gone_ + kCallerGraceMs);
    if (limits_.min_free.bytes || limits_.min_free.inodes) nearer(next_look_);
    if (deadline < 0) return -1;
    return static_cast<int>(std::clamp<int64_t>(deadline - now_ms(), 0, 24 * 3600 * 1000));
}

void LimitWatch::caller_gone() {
    if (caller_gone_ < 0) caller_gone_ = now_ms();
}

std::string LimitWatch::check(int* code) {
    if (caller_gone_ >= 0 && now_ms() - caller_gone_ >= kCallerGraceMs) {
        *code = 125;
        return "the caller closed its IPC socket (--ipc-fd) and the command did not end within " +
               limits::format_duration(static_cast<uint64_t>(kCallerGraceMs)) + ": sandbox stopped";
    }
    if (limits_.timeout_ms && now_ms() - start_ >= static_cast<int64_t>(limits_.timeout_ms)) {
        *code = 124;
        return "--timeout " + limits::format_duration(limits_.timeout_ms) + " reached: sandbox stopped";
    }
    if ((limits_.min_free.bytes || limits_.min_free.inodes) && now_ms() >= next_look_)
        if (std::string m = look_free(code); !m.empty()) return m;
    return limits_.max_size ? read_reports(code) : "";
}

std::string LimitWatch::look_free(int* code) {
    disk_floor::Space sp;
    if (!disk_floor::look(limits_.min_free.dir, &sp)) {  // gone for a moment? look again later
        next_look_ = now_ms() + kMaxSizeInterval;
        return "";
    }
    std::string m = disk_floor::stopped(limits_.min_free, sp.avail);
    if (m.empty()) m = disk_floor::stopped_inodes(limits_.min_free, sp.favail);
    if (!m.empty()) {
        *code = 125;
        return m;
    }
    next_look_ = now_ms() + next_size_interval(0, 0, disk_floor::room(limits_.min_free, sp));
    return "";
}

std::string LimitWatch::read_reports(int* code) {
    const std::string cap = "--max-size " + limits::format_bytes(limits_.max_size);
    *code = 125;
    if (!reports_.valid()) return cap + ": the size watch could not start: sandbox stopped";
    char buf[512];
    ssize_t n;
    while ((n = ::read(reports_.get(), buf, sizeof buf)) > 0) partial_.append(buf, static_cast<size_t>(n));
    if (n == 0) return cap + ": the size watch ended: sandbox stopped";
    size_t end;
    while ((end = partial_.find('\n')) != std::string::npos) {
        std::string line = partial_.substr(0, end);
        partial_.erase(0, end + 1);
        uint64_t bytes = std::strtoull(line.c_str(), nullptr, 10);
        if (bytes > limits_.max_size)
            return cap + " reached (the " + (layered_ ? "session's layers hold " : "upper layer holds ") +
                   limits::format_bytes(bytes) + "): sandbox stopped";
        if (line.size() < 2 || line.substr(line.size() - 2) != " 1")
            return cap + ": the upper layer cannot be measured whole (directories nested deeper than " +
                   std::to_string(session::kMaxUsageDepth) + " levels?): sandbox stopped";
    }
    return "";
}

void LimitWatch::track_init(pid_t init) {
    // init is the supervisor's own child (setup that was): until we reap it, this pid is init's.
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, init, 0));
    if (fd >= 0) init_.reset(fd);
}

void LimitWatch::stop(pid_t setup) {
    if (init_.valid()) ::syscall(SYS_pidfd_send_signal, init_.get(), SIGKILL, nullptr, 0);
    ::kill(setup, SIGKILL);  // the same process, should setup not have reported yet
}

void LimitWatch::wait_stopped() {
    watcher_ = base::Child();  // killed and reaped
    if (!init_.valid()) return;
    struct pollfd p = {init_.get(), POLLIN, 0};
    int64_t deadline = now_ms() + 10000;
    while (::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, deadline - now_ms()))) < 0 && errno == EINTR) {
    }
}
