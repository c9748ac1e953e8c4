#include "capture/zstream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "helper/base/fd.h"

namespace capture {

ZstdWriter::ZstdWriter(int fd, int level) : fd_(fd), cctx_(ZSTD_createCCtx()), out_(ZSTD_CStreamOutSize()) {
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    // Fails harmlessly (single-threaded) when libzstd was built without threads.
    if (cpus > 1) ZSTD_CCtx_setParameter(cctx_, ZSTD_c_nbWorkers, static_cast<int>(std::min(cpus, 8L)));
    off_t pos = ::lseek(fd, 0, SEEK_CUR);
    struct stat st;
    if (pos >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) start_ = pos;
}

// Patch files are fsync'ed before they are renamed into place. Handing the
// written data to writeback as we go (without waiting for it) overlaps the
// disk with compression, so that final fsync waits only for the tail.
void ZstdWriter::start_writeback(bool all) {
    constexpr uint64_t kStep = uint64_t{8} << 20;
    if (start_ < 0 || written_ - writeback_ < (all ? 1 : kStep)) return;
    // Best effort: a filesystem without it just leaves the work to fsync.
    (void)::sync_file_range(fd_, start_ + static_cast<off_t>(writeback_), static_cast<off_t>(written_ - writeback_),
                            SYNC_FILE_RANGE_WRITE);
    writeback_ = written_;
}

ZstdWriter::~ZstdWriter() { ZSTD_freeCCtx(cctx_); }

base::Result<void> ZstdWriter::drive(const void* p, size_t len, ZSTD_EndDirective mode) {
    ZSTD_inBuffer in{p, len, 0};
    for (;;) {
        ZSTD_outBuffer out{out_.data(), out_.size(), 0};
        size_t r = ZSTD_compressStream2(cctx_, &out, &in, mode);
        if (ZSTD_isError(r)) return base::error(std::string("zstd compression failed: ") + ZSTD_getErrorName(r));
        if (out.pos > 0) {
            TRY_VOID(base::write_all(fd_, out_.data(), out.pos));
            written_ += out.pos;
            start_writeback(false);
        }
        bool done = mode == ZSTD_e_continue ? in.pos == in.size : r == 0;
        if (done) return base::Ok();
    }
}

base::Result<void> ZstdWriter::write(const void* p, size_t len) { return drive(p, len, ZSTD_e_continue); }

base::Result<void> ZstdWriter::finish() {
    TRY_VOID(drive(nullptr, 0, ZSTD_e_end));
    start_writeback(true);
    return base::Ok();
}

namespace {
constexpr size_t kChunk = size_t{1} << 20;  // handed over at a time
constexpr size_t kAhead = 4;                // chunks decoded ahead at most
const size_t kSlice = ZSTD_DStreamOutSize();  // handed out at a time
}  // namespace

ZstdReader::Decoder::Decoder(int fd) : fd_(fd), dctx_(ZSTD_createDCtx()), in_(ZSTD_DStreamInSize()) {
    in_buf_.src = in_.data();
}

ZstdReader::Decoder::~Decoder() { ZSTD_freeDCtx(dctx_); }

void ZstdReader::Decoder::fill(Chunk* c, size_t want) {
    while (c->size < want) {
        auto r = step(c->buf.get() + c->size, want - c->size);
        if (!r) {
            c->error = r.error();
            c->end = true;
            return;
        }
        if (*r == 0) {  // the clean end
            c->end = true;
            return;
        }
        c->size += *r;
    }
}

base::Result<size_t> ZstdReader::Decoder::step(char* p, size_t room) {
    for (;;) {
        if (in_buf_.pos == in_buf_.size && !eof_) {
            ssize_t n;
            do n = ::read(fd_, in_.data(), in_.size());
            while (n < 0 && errno == EINTR);
            if (n < 0) return base::sys_error("reading the patch");
            in_buf_ = {in_.data(), static_cast<size_t>(n), 0};
            if (n == 0) eof_ = true;
        }
        size_t avail = in_buf_.size - in_buf_.pos;
        if (avail == 0 && eof_) {
            if (last_ret_ != 0 || total_ == 0)
                return base::error("the patch is truncated (the zstd stream ends mid-frame)");
            return size_t{0};
        }
        if (frame_start_) {
            // The frame header's first 5 bytes: magic, then the descriptor
            // whose bit 2 is Content_Checksum_flag (RFC 8878, 3.1.1.1).
            if (avail < 5 && !eof_) {
                std::copy(in_.data() + in_buf_.pos, in_.data() + in_buf_.size, in_.data());
                ssize_t n;
                do n = ::read(fd_, in_.data() + avail, in_.size() - avail);
                while (n < 0 && errno == EINTR);
                if (n < 0) return base::sys_error("reading the patch");
                if (n == 0) eof_ = true;
                in_buf_ = {in_.data(), avail + static_cast<size_t>(n), 0};
                continue;
            }
            if (avail < 5) return base::error("the patch is truncated (incomplete zstd frame header)");
            const unsigned char* h = reinterpret_cast<const unsigned char*>(in_.data() + in_buf_.pos);
            uint32_t magic = h[0] | (h[1] << 8) | (h[2] << 16) | (static_cast<uint32_t>(h[3]) << 24);
            if ((magic & 0xFFFFFFF0u) == 0x184D2A50u)
                return base::error("the patch holds a skippable zstd frame, which layover patches never contain");
            if (magic != 0xFD2FB528u) return base::error("not a zstd-compressed patch (bad frame magic)");
            if (!(h[4] & 0x04))
                return base::error("the patch's zstd frames carry no checksum; layover patches always have one");
            frame_start_ = false;
        }
        ZSTD_outBuffer out{p, room, 0};
        size_t r = ZSTD_decompressStream(dctx_, &out, &in_buf_);
        if (ZSTD_isError(r))
            return base::error(std::string("the patch is corrupt (zstd: ") + ZSTD_getErrorName(r) + ")");
        last_ret_ = r;
        if (r == 0) frame_start_ = true;
        if (out.pos > 0) {
            total_ += out.pos;
            return out.pos;
        }
    }
}

ZstdReader::ZstdReader(int fd) : dec_(fd) {
    try {
        thread_ = std::thread([this] { prefetch(); });
        threaded_ = true;
    } catch (const std::system_error&) {
        // No second thread: decode on the caller's, chunk by chunk.
    }
}

ZstdReader::~ZstdReader() {
    if (!threaded_) return;
    {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
}

void ZstdReader::decode_into(std::deque<Chunk>* q) {
    Chunk c;
    {
        std::lock_guard<std::mutex> l(mu_);
        if (!spare_.empty()) {
            c.buf = std::move(spare_.back());
            spare_.pop_back();
        }
    }
    if (!c.buf) c.buf.reset(new char[kChunk]);
    dec_.fill(&c, kChunk);
    bool end = c.end;
    Chunk last;
    last.error = std::move(c.error);
    last.end = true;
    if (c.size > 0) {
        c.end = false;
        q->push_back(std::move(c));
    }
    if (end) q->push_back(std::move(last));
}

void ZstdReader::prefetch() {
    for (;;) {
        std::deque<Chunk> got;
        decode_into(&got);
        bool end = got.back().end;
        std::unique_lock<std::mutex> l(mu_);
        cv_.wait(l, [&] { return stop_ || ready_.size() < kAhead; });
        if (stop_) return;
        for (auto& c : got) ready_.push_back(std::move(c));
        cv_.notify_all();
        if (end) return;
    }
}

base::Result<std::pair<const char*, size_t>> ZstdReader::next() {
    // Chunks are decoded a MiB at a time but handed out in slices no bigger
    // than libzstd's own output size: the tar reader's header budget
    // (tar_in.h) counts what it is handed, with that much slack.
    if (pos_ < current_.size) {
        size_t n = std::min(kSlice, current_.size - pos_);
        const char* p = current_.buf.get() + pos_;
        pos_ += n;
        total_out_ += n;
        return std::pair<const char*, size_t>{p, n};
    }
    if (done_) {
        if (!current_.error.message.empty()) return current_.error;
        return std::pair<const char*, size_t>{nullptr, 0};
    }
    if (threaded_) {
        std::unique_lock<std::mutex> l(mu_);
        if (current_.buf) spare_.push_back(std::move(current_.buf));
        cv_.wait(l, [&] { return !ready_.empty(); });
        current_ = std::move(ready_.front());
        ready_.pop_front();
        cv_.notify_all();
    } else {
        if (current_.buf) spare_.push_back(std::move(current_.buf));
        if (ready_.empty()) decode_into(&ready_);
        current_ = std::move(ready_.front());
        ready_.pop_front();
    }
    if (current_.end) {
        done_ = true;
        if (!current_.error.message.empty()) return current_.error;
        return std::pair<const char*, size_t>{nullptr, 0};
    }
    pos_ = 0;
    return next();
}

}  // namespace capture
