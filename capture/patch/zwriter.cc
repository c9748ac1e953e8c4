// Writing patches: tar bytes cut into frames of kFrameBytes, each compressed
// on its own (by worker threads when there are CPUs for them) and written
// in order. This is what libzstd's own worker threads do, except that each
// piece is a whole frame, which a reader can decode without the others.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <system_error>

#include "capture/patch/spare_bufs.h"
#include "capture/patch/zstream.h"

// ZSTD_c_literalCompressionMode (stable in libzstd since 1.4.5, still
// listed as experimental).
#define ZSTD_STATIC_LINKING_ONLY
#include <zstd.h>

#include "helper/base/fd.h"

namespace capture {

namespace {

ZSTD_CCtx* new_cctx(int level) {
    ZSTD_CCtx* c = ZSTD_createCCtx();
    if (!c) return nullptr;
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    return c;
}

// Level 1 as new_cctx set it, or fast (kFastTargetLength and kFastHashLog,
// literals still compressed); a libzstd refusing either keeps level 1.
void set_fast(ZSTD_CCtx* c, bool fast) {
    if (!fast) {
        ZSTD_CCtx_setParameter(c, ZSTD_c_targetLength, 0);
        ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, 0);
        ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, ZSTD_ps_auto);
    } else if (!ZSTD_isError(ZSTD_CCtx_setParameter(c, ZSTD_c_literalCompressionMode, ZSTD_ps_enable))) {
        ZSTD_CCtx_setParameter(c, ZSTD_c_targetLength, kFastTargetLength);
        ZSTD_CCtx_setParameter(c, ZSTD_c_hashLog, kFastHashLog);
    }
}

// Compress one whole frame; "" or why not.
std::string compress(ZSTD_CCtx* c, bool fast, const char* in, size_t n, char* out, size_t cap, size_t* got) {
    if (!c) return "zstd compression failed: out of memory";
    set_fast(c, fast);
    size_t r = ZSTD_compress2(c, out, cap, in, n);
    if (ZSTD_isError(r)) return std::string("zstd compression failed: ") + ZSTD_getErrorName(r);
    *got = r;
    return "";
}

}  // namespace

// Patch files are fsync'ed before they are renamed into place. Handing the
// written data to writeback as we go (without waiting for it) overlaps the
// disk with compression, but that left the final fsync 30-45 ms of a 23 MB
// patch here all the same: most of it is the disk's cache flush (a VM's
// disk: its host writes the data out then). With flush_as_written, a
// thread flushes (fdatasync) every kFlushStep as it is written instead
// (docs/performance.md, "Save, round 8").
constexpr uint64_t kFlushStep = uint64_t{2} << 20;

// Through an open file of its own: a write error it meets is still
// reported to the caller's fsync (each open file sees it once). Detached:
// nothing waits for its last flush but the caller's fsync, which would
// wait for the same disk anyway.
struct ZstdWriter::Flusher {
    base::Fd fd;
    std::mutex mu;
    std::condition_variable cv;
    bool asked = false, stop = false;
    void loop() {
        std::unique_lock<std::mutex> l(mu);
        for (;;) {
            cv.wait(l, [&] { return stop || asked; });
            if (stop) return;
            asked = false;
            l.unlock();
            (void)::fdatasync(fd.get());
            l.lock();
        }
    }
};

ZstdWriter::ZstdWriter(int fd, int level, int threads) : fd_(fd), level_(level) {
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    workers_wanted_ = threads >= 0 ? static_cast<size_t>(threads)
                      : cpus > 1   ? static_cast<size_t>(std::min(cpus, 8L))
                                   : 0;
    off_t pos = ::lseek(fd, 0, SEEK_CUR);
    struct stat st;
    if (pos >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) start_ = pos;
}

ZstdWriter::ZstdWriter(Out out, int level) : fd_(-1), level_(level), out_(std::move(out)) {}

ZstdWriter::~ZstdWriter() {
    {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    if (flusher_) {
        std::lock_guard<std::mutex> l(flusher_->mu);
        flusher_->stop = true;
        flusher_->cv.notify_one();
    }
    ZSTD_freeCCtx(inline_cctx_);
}

// False: no flusher (no /proc, no thread); writeback only, as without durable_.
bool ZstdWriter::ask_flush() {
    if (!flusher_) {
        auto f = std::make_shared<Flusher>();
        f->fd.reset(::open(("/proc/self/fd/" + std::to_string(fd_)).c_str(), O_RDONLY | O_CLOEXEC));
        if (!f->fd.valid()) return durable_ = false;
        try {
            std::thread([f] { f->loop(); }).detach();
        } catch (const std::system_error&) {
            return durable_ = false;
        }
        flusher_ = std::move(f);
    }
    {
        std::lock_guard<std::mutex> l(flusher_->mu);
        flusher_->asked = true;
    }
    flusher_->cv.notify_one();
    return true;
}

void ZstdWriter::start_writeback(bool all) {
    constexpr uint64_t kStep = uint64_t{8} << 20;
    if (start_ < 0) return;
    if (durable_ && !all && written_ - writeback_ >= kFlushStep && ask_flush()) {
        writeback_ = written_;  // the flush writes it out
        return;
    }
    if (written_ - writeback_ < (all ? 1 : kStep)) return;
    // Best effort: a filesystem without it just leaves the work to fsync.
    (void)::sync_file_range(fd_, start_ + static_cast<off_t>(writeback_), static_cast<off_t>(written_ - writeback_),
                            SYNC_FILE_RANGE_WRITE);
    writeback_ = written_;
}

ZstdWriter::Buf ZstdWriter::take_buf(size_t cap) { return recycled_buffer(mu_, spare_, cap); }

base::Result<void> ZstdWriter::write(const void* p, size_t len) {
    const char* c = static_cast<const char*>(p);
    while (len > 0) {
        if (!cur_.p) cur_ = take_buf(kFrameBytes);
        size_t n = std::min(len, kFrameBytes - cur_.size);
        std::memcpy(cur_.p.get() + cur_.size, c, n);
        cur_.size += n;
        c += n;
        len -= n;
        in_ += n;
        if (cur_.size == kFrameBytes) TRY_VOID(submit(true));
    }
    return base::Ok();
}

base::Result<void> ZstdWriter::group(size_t bytes, bool fast) {
    if (cur_.p && cur_.size >= kFrameBytes / 2 && bytes > kFrameBytes - cur_.size) TRY_VOID(submit(true));
    if (fast) fast_to_ = std::max<uint64_t>(fast_to_, in_ + bytes);
    return base::Ok();
}

base::Result<void> ZstdWriter::cut() {
    if (cur_.p && cur_.size > 0) TRY_VOID(submit(true));
    fast_to_ = std::min(fast_to_, in_);
    return base::Ok();
}

base::Result<void> ZstdWriter::write_frames(const char* p, size_t n, uint64_t raw) {
    TRY_VOID(cut());
    TRY_VOID(write_done(true));  // the frames before these, in order
    any_frame_ = true;
    in_ += raw;
    fast_to_ = std::min(fast_to_, in_);
    TRY_VOID(base::write_all(fd_, p, n));
    written_ += n;
    start_writeback(false);
    return base::Ok();
}

base::Result<void> ZstdWriter::submit(bool more) {
    any_frame_ = true;
    if (!cur_.p) cur_ = take_buf(kFrameBytes);  // an empty stream is one empty frame
    if (threads_.size() < workers_wanted_ && more) {
        // Started as frames fill up: a small patch (one frame) needs none.
        try {
            threads_.emplace_back([this] { work(); });
        } catch (const std::system_error&) {
            workers_wanted_ = threads_.size();
        }
    }
    auto job = std::make_shared<Job>();
    job->fast = in_ - cur_.size < fast_to_;
    job->in = std::move(cur_);
    cur_ = Buf();
    if (threads_.empty()) {
        if (!inline_cctx_) inline_cctx_ = new_cctx(level_);
        job->out = take_buf(ZSTD_compressBound(job->in.size));
        job->error = compress(inline_cctx_, job->fast, job->in.p.get(), job->in.size, job->out.p.get(), job->out.cap,
                              &job->out.size);
        job->done = true;
        std::lock_guard<std::mutex> l(mu_);
        jobs_.push_back(job);
    } else {
        {
            std::lock_guard<std::mutex> l(mu_);
            jobs_.push_back(job);
            todo_.push_back(job);
        }
        cv_.notify_all();
    }
    return write_done(false);
}

void ZstdWriter::work() {
    ZSTD_CCtx* c = new_cctx(level_);
    for (;;) {
        std::shared_ptr<Job> j;
        {
            std::unique_lock<std::mutex> l(mu_);
            cv_.wait(l, [&] { return stop_ || !todo_.empty(); });
            if (stop_) break;
            j = todo_.front();
            todo_.pop_front();
        }
        Buf out = take_buf(ZSTD_compressBound(j->in.size));
        j->error = compress(c, j->fast, j->in.p.get(), j->in.size, out.p.get(), out.cap, &out.size);
        {
            std::lock_guard<std::mutex> l(mu_);
            j->out = std::move(out);
            spare_.push_back(std::move(j->in));
            j->done = true;
        }
        cv_.notify_all();
    }
    ZSTD_freeCCtx(c);
}

// Frames go out in the order they were cut. Without `all`, only those done
// already, and the oldest is waited for when workers + 1 frames are in
// flight: memory stays a few frames whatever the patch's size.
base::Result<void> ZstdWriter::write_done(bool all) {
    for (;;) {
        std::shared_ptr<Job> j;
        {
            std::unique_lock<std::mutex> l(mu_);
            if (jobs_.empty()) return base::Ok();
            bool must = all || jobs_.size() > threads_.size();
            if (!jobs_.front()->done) {
                if (!must) return base::Ok();
                cv_.wait(l, [&] { return jobs_.front()->done; });
            }
            j = std::move(jobs_.front());
            jobs_.pop_front();
        }
        if (!j->error.empty()) return base::error(j->error);
        if (out_) {
            TRY_VOID(out_(j->out.p.get(), j->out.size));
        } else {
            TRY_VOID(base::write_all(fd_, j->out.p.get(), j->out.size));
            written_ += j->out.size;
            start_writeback(false);
        }
        std::lock_guard<std::mutex> l(mu_);
        spare_.push_back(std::move(j->out));
        if (j->in.p) spare_.push_back(std::move(j->in));
    }
}

base::Result<void> ZstdWriter::finish() {
    if ((cur_.p && cur_.size > 0) || !any_frame_) TRY_VOID(submit(false));
    TRY_VOID(write_done(true));
    start_writeback(true);
    return base::Ok();
}

}  // namespace capture
