#include "helper/sandbox/prepare/upper_flush.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "helper/base/fd.h"
#include "helper/base/thread.h"

namespace {

uint64_t moved_by(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

bool read_cpu(CpuTicks* out) {
    base::Fd f(::open("/proc/stat", O_RDONLY | O_CLOEXEC));
    if (!f.valid()) return false;
    return parse_cpu_ticks(base::read_upto(f.get(), 256), out);
}

bool look(int fd, FsFree* out) {
    struct statfs st;
    if (::fstatfs(fd, &st) != 0) return false;
    out->bytes = static_cast<uint64_t>(st.f_bfree) * static_cast<uint64_t>(st.f_bsize);
    out->inodes = static_cast<uint64_t>(st.f_ffree);
    return true;
}

}  // namespace

bool parse_cpu_ticks(const std::string& proc_stat, CpuTicks* out) {
    if (proc_stat.compare(0, 4, "cpu ") != 0) return false;
    const char* p = proc_stat.c_str() + 4;
    CpuTicks t;
    int field = 0;
    for (; field < 8; ++field) {  // user nice system idle iowait irq softirq steal (guest is in user)
        char* end = nullptr;
        errno = 0;
        unsigned long long v = std::strtoull(p, &end, 10);
        if (end == p || errno != 0) break;
        if (field == 3 || field == 4) t.idle += v;
        t.total += v;
        p = end;
    }
    if (field < 4) return false;  // not even the idle field
    *out = t;
    return true;
}

bool cpu_free(const CpuTicks& before, const CpuTicks& now, unsigned ncpu) {
    if (now.total <= before.total || now.idle < before.idle || ncpu == 0) return true;  // no tick yet: no evidence
    // the idle share of all CPUs' time is at least a quarter of one CPU's
    return (now.idle - before.idle) * 4 * ncpu >= now.total - before.total;
}

bool flush_due(const FsFree& since, const FsFree& now) {
    return moved_by(since.bytes, now.bytes) >= kFlushMinBytes || moved_by(since.inodes, now.inodes) >= kFlushMinInodes;
}

int next_flush_period(int period_ms, bool moved) {
    if (moved) return kFlushPeriodMs;
    return period_ms * 2 < kFlushIdleMs ? period_ms * 2 : kFlushIdleMs;
}

struct UpperFlush::State {
    // Two opens: a writeback error is reported once per open file, so the
    // early syncfs calls must not take it from the final one's fd.
    base::Fd watch, last;
    std::mutex mu;
    std::condition_variable cv;
    enum class Ask { Watch, Final, Stop } ask = Ask::Watch;
    bool synced = false;       // the final syncfs ran
    int error = 0;             // and failed with this errno
    base::StackThread thread;  // joined by its destructor too

    void run() {
        ::pthread_setname_np(::pthread_self(), "layover-flush");  // ps -L, and the tests, see it
        std::unique_lock<std::mutex> l(mu);
        FsFree since, prev;  // at the last flush (or the first look); at the last look
        bool known = look(watch.get(), &since);
        prev = since;
        unsigned ncpu = std::thread::hardware_concurrency();
        CpuTicks ticks;
        bool ticked = read_cpu(&ticks);
        int period = kFlushPeriodMs;
        while (!cv.wait_for(l, std::chrono::milliseconds(period), [this] { return ask != Ask::Watch; })) {
            l.unlock();
            FsFree now;
            bool moved = false;
            if (look(watch.get(), &now)) {
                moved = known && (now.bytes != prev.bytes || now.inodes != prev.inodes);
                if (!known) since = now;
                known = true;
                prev = now;
                CpuTicks t;
                bool got = read_cpu(&t);
                bool free = !ticked || !got || cpu_free(ticks, t, ncpu);  // no evidence: flush
                ticked = got;
                if (got) ticks = t;
                if (flush_due(since, now) && free) {
                    (void)::syncfs(watch.get());  // advisory: the exit's syncfs still runs
                    known = look(watch.get(), &since);
                    prev = since;
                    ticked = read_cpu(&ticks);  // the flush's own wait is not idle time the command left
                }
            }
            period = next_flush_period(period, moved);
            l.lock();
        }
        if (ask != Ask::Final) return;
        l.unlock();
        int e = ::syncfs(last.get()) == 0 ? 0 : errno;
        l.lock();
        synced = true;
        error = e;
    }
};

UpperFlush::UpperFlush() = default;
UpperFlush::~UpperFlush() { stop(); }
UpperFlush::UpperFlush(UpperFlush&&) noexcept = default;
UpperFlush& UpperFlush::operator=(UpperFlush&& o) noexcept {
    stop();
    s_ = std::move(o.s_);
    return *this;
}

bool UpperFlush::start(const std::string& dir) {
    stop();
    auto s = std::make_unique<State>();
    s->watch.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    s->last.reset(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!s->watch.valid() || !s->last.valid()) return false;
    // No signal for this thread: run's relayed signals wait in its signalfd.
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &old);
    State* p = s.get();
    bool started = s->thread.start([p] { p->run(); }, size_t{1} << 16);  // no deep recursion here
    ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
    if (!started) return false;  // no thread: finish_run syncs at the exit, as it did before
    s_ = std::move(s);
    return true;
}

void UpperFlush::end(bool final_sync) {
    if (!s_) return;
    {
        std::lock_guard<std::mutex> l(s_->mu);
        if (s_->ask == State::Ask::Watch) s_->ask = final_sync ? State::Ask::Final : State::Ask::Stop;
    }
    s_->cv.notify_all();
}

void UpperFlush::finish() { end(true); }

bool UpperFlush::wait() {
    if (!s_) return false;
    end(true);
    s_->thread.join();
    return s_->synced;
}

int UpperFlush::error() const { return s_ ? s_->error : 0; }

void UpperFlush::stop() {
    if (!s_) return;
    end(false);
    s_->thread.join();
    s_.reset();
}
