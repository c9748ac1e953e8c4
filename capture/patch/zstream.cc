// Reading patches: the frames of the file are claimed one at a time, in
// order, by worker threads that each decode whole frames; the caller takes
// the decoded bytes frame after frame. A frame's extent is found by walking
// its block headers (zframe.h); a stream that cannot be walked (not a
// regular file, or something odd in it) is decoded from there to its end by
// one worker, exactly as a single decoder would, errors included.
#include "capture/patch/zstream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "capture/patch/zframe.h"
#include "helper/base/fd.h"

namespace capture {

namespace {
constexpr size_t kChunk = size_t{1} << 20;          // decoded and handed over at a time
constexpr size_t kUnitChunks = 4;                   // chunks decoded ahead in a frame that is streamed
constexpr size_t kWholeMax = size_t{8} << 20;       // frames up to this decoded size are decoded in one call
constexpr size_t kSpareMax = 8;                     // buffers kept for reuse
constexpr uint64_t kMarkEvery = uint64_t{1} << 20;  // decoded bytes between recorded restart points
// A frame needing a larger window is refused (a patch could otherwise make
// each decoding thread allocate up to 128 MiB); layover writes 1 MiB frames,
// and zstd's levels up to 19 stay within it.
constexpr int kWindowLogMax = 24;
constexpr uint64_t kWindowMax = uint64_t{1} << kWindowLogMax;
constexpr size_t kFrameHeaderMax = 18;  // RFC 8878, 3.1.1.1
const char* const kWindowTooLarge =
    "the patch has a zstd frame that needs a window over 16 MiB, more than layover allows (it writes 1 MiB "
    "frames); recompress it at a level of 19 or less";
constexpr size_t kMaxWorkers = 4;
constexpr uint64_t kToEof = UINT64_MAX;
constexpr size_t kReadBytes = size_t{256} << 10;
const size_t kSlice = ZSTD_DStreamOutSize();  // handed out at a time

base::Result<size_t> read_some(int fd, char* p, size_t n, uint64_t off, bool seq) {
    ssize_t r;
    do r = seq ? ::read(fd, p, n) : ::pread(fd, p, n, static_cast<off_t>(off));
    while (r < 0 && errno == EINTR);
    if (r < 0) return base::sys_error("reading the patch");
    return static_cast<size_t>(r);
}
}  // namespace

// ---- one range of frames --------------------------------------------------

ZstdReader::Decoder::Decoder(int fd, bool seq)
    : fd_(fd), seq_(seq), dctx_(ZSTD_createDCtx()), in_(std::max(kReadBytes, ZSTD_DStreamInSize())) {
    if (dctx_) ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, kWindowLogMax);
}

ZstdReader::Decoder::~Decoder() { ZSTD_freeDCtx(dctx_); }

void ZstdReader::Decoder::reset(uint64_t begin, uint64_t end) {
    ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only);
    in_buf_ = {in_.data(), 0, 0};
    pos_ = begin;
    end_ = end;
    eof_ = false;
    frame_start_ = true;
    last_ret_ = 0;
}

void ZstdReader::Decoder::fill(Chunk* c, size_t want) {
    while (c->size < want) {
        auto r = step(c->buf.get() + c->size, want - c->size);
        if (!r) {
            c->error = r.error();
            c->end = true;
            return;
        }
        if (*r == 0) {  // the clean end of the range
            c->end = true;
            return;
        }
        c->size += *r;
    }
}

size_t ZstdReader::Decoder::whole_size() {
    if (seq_ || end_ == kToEof || end_ - pos_ > ZSTD_compressBound(kWholeMax)) return 0;
    unsigned char h[kFrameHeaderMax];
    size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof h, end_ - pos_));
    if (::pread(fd_, h, n, static_cast<off_t>(pos_)) != static_cast<ssize_t>(n)) return 0;
    // Problems, a large window among them, are reported by the streaming path.
    if (!frame_start_problem(h, n).empty()) return 0;
    auto window = frame_window(h, n);
    if (!window || *window > kWindowMax) return 0;
    unsigned long long size = ZSTD_getFrameContentSize(h, n);
    if (size == ZSTD_CONTENTSIZE_UNKNOWN || size == ZSTD_CONTENTSIZE_ERROR || size == 0 || size > kWholeMax) return 0;
    return static_cast<size_t>(size);
}

void ZstdReader::Decoder::fill_whole(Chunk* c, size_t size) {
    c->end = true;
    size_t len = static_cast<size_t>(end_ - pos_);
    if (in_.size() < len) {
        in_.resize(len);
        in_buf_ = {in_.data(), 0, 0};  // nothing buffered points into the old storage
    }
    size_t got = 0;
    while (got < len) {
        auto r = read_some(fd_, in_.data() + got, len - got, pos_ + got, false);
        if (!r) {
            c->error = r.error();
            return;
        }
        if (*r == 0) {
            c->error = base::error("the patch is truncated (the zstd stream ends mid-frame)");
            return;
        }
        got += *r;
    }
    pos_ = end_;
    size_t r = ZSTD_decompressDCtx(dctx_, c->buf.get(), size, in_.data(), len);
    if (ZSTD_isError(r)) {
        c->error = base::error(std::string("the patch is corrupt (zstd: ") + ZSTD_getErrorName(r) + ")");
        return;
    }
    if (r != size) {
        c->error = base::error("the patch is corrupt (a zstd frame's content does not match its declared size)");
        return;
    }
    c->size = size;
}

// Moves the unread input (keep bytes) to the front and reads more after it.
base::Result<void> ZstdReader::Decoder::refill(size_t keep) {
    if (keep > 0 && in_buf_.pos > 0) std::copy(in_.data() + in_buf_.pos, in_.data() + in_buf_.size, in_.data());
    size_t room = in_.size() - keep;
    if (end_ != kToEof) room = static_cast<size_t>(std::min<uint64_t>(room, end_ - pos_));
    size_t n = 0;
    if (room > 0) {
        auto got = read_some(fd_, in_.data() + keep, room, pos_, seq_);
        if (!got) return got.error();
        n = *got;
    }
    pos_ += n;
    if (n == 0) eof_ = true;
    in_buf_ = {in_.data(), keep + n, 0};
    return base::Ok();
}

base::Result<size_t> ZstdReader::Decoder::step(char* p, size_t room) {
    if (!dctx_) return base::error("out of memory for the zstd decoder");
    for (;;) {
        if (in_buf_.pos == in_buf_.size && !eof_) TRY_VOID(refill(0));
        size_t avail = in_buf_.size - in_buf_.pos;
        if (avail == 0 && eof_) {
            if (last_ret_ != 0) return base::error("the patch is truncated (the zstd stream ends mid-frame)");
            return size_t{0};
        }
        if (frame_start_) {
            if (avail < kFrameHeaderMax && !eof_) {
                TRY_VOID(refill(avail));
                continue;
            }
            auto h = reinterpret_cast<const unsigned char*>(in_.data() + in_buf_.pos);
            std::string bad = frame_start_problem(h, avail);
            if (!bad.empty()) return base::error(bad);
            // Checked here as well as by libzstd, which skips its own check
            // when it can decode a small frame in one go.
            auto window = frame_window(h, avail);
            if (window && *window > kWindowMax) return base::error(kWindowTooLarge);
            frame_start_ = false;
        }
        ZSTD_outBuffer out{p, room, 0};
        size_t r = ZSTD_decompressStream(dctx_, &out, &in_buf_);
        if (ZSTD_isError(r) && ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge)
            return base::error(kWindowTooLarge);
        if (ZSTD_isError(r))
            return base::error(std::string("the patch is corrupt (zstd: ") + ZSTD_getErrorName(r) + ")");
        last_ret_ = r;
        if (r == 0) frame_start_ = true;
        if (out.pos > 0) return out.pos;
    }
}

// ---- scheduling ------------------------------------------------------------

ZstdReader::ZstdReader(int fd, int threads, uint64_t start) : fd_(fd) {
    struct stat st;
    off_t at = start == kHere ? ::lseek(fd, 0, SEEK_CUR) : static_cast<off_t>(start);
    if (at >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        seekable_ = true;
        next_begin_ = static_cast<uint64_t>(at);
        size_ = static_cast<uint64_t>(st.st_size);
    }
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    // One worker still decodes beside the caller; more only with CPUs for them.
    size_t n = threads >= 0 ? static_cast<size_t>(threads)
               : !seekable_ ? 1
                            : static_cast<size_t>(std::clamp(cpus, 1L, static_cast<long>(kMaxWorkers)));
    if (!seekable_) n = std::min<size_t>(n, 1);  // one range, read in order
    ahead_ = std::max<size_t>(n, 1);
    for (size_t i = 0; i < n; i++) {
        workers_.push_back(std::make_unique<Worker>(fd, !seekable_));
        Worker* w = workers_.back().get();
        try {
            threads_.emplace_back([this, w] {
                while (produce(*w, true)) {
                }
            });
        } catch (const std::system_error&) {
            workers_.pop_back();
            break;
        }
    }
    if (threads_.empty()) inline_ = std::make_unique<Worker>(fd, !seekable_);  // decode on the caller's thread
}

ZstdReader::~ZstdReader() {
    {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
}

// The next unit: the frame at next_begin_ (walked to find its end), or the
// rest of the stream. Units are claimed in order, and at most a few beyond
// the one being read, which bounds memory.
bool ZstdReader::claim(Worker& w, bool wait) {
    std::lock_guard<std::mutex> cl(claim_mu_);
    {
        std::unique_lock<std::mutex> l(mu_);
        if (wait) cv_.wait(l, [&] { return stop_ || walk_done_ || claimed_ < taking_ + ahead_; });
        if (stop_ || walk_done_) return false;
    }
    uint64_t begin = next_begin_, end = kToEof;
    bool last = true;
    if (seekable_ && begin >= size_) {
        std::lock_guard<std::mutex> l(mu_);
        walk_done_ = true;
        total_units_ = claimed_;
        cv_.notify_all();
        return false;
    }
    if (seekable_) {
        int fd = fd_;
        auto at =
            frame_end([fd](uint64_t off, unsigned char* p,
                           size_t n) { return ::pread(fd, p, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n); },
                      begin, size_);
        if (at) {
            end = *at;
            last = false;
            next_begin_ = end;
        }
    }
    std::lock_guard<std::mutex> l(mu_);
    w.unit = claimed_++;
    units_[w.unit].begin = begin;
    if (last) {
        walk_done_ = true;
        total_units_ = claimed_;
    }
    w.busy = true;
    w.fresh = true;
    w.dec.reset(begin, end);
    cv_.notify_all();
    return true;
}

ZstdReader::Chunk ZstdReader::buffer(size_t cap) {
    Chunk c;
    {
        std::lock_guard<std::mutex> l(mu_);
        for (size_t i = 0; i < spare_.size(); i++)
            if (spare_[i].cap >= cap) {
                c.buf = std::move(spare_[i].buf);
                c.cap = spare_[i].cap;
                spare_.erase(spare_.begin() + static_cast<ptrdiff_t>(i));
                return c;
            }
    }
    c.buf.reset(new char[cap]);  // not zeroed: only decoded bytes are read
    c.cap = cap;
    return c;
}

bool ZstdReader::produce(Worker& w, bool wait) {
    if (!w.busy && !claim(w, wait)) return false;
    size_t whole = w.fresh ? w.dec.whole_size() : 0;
    w.fresh = false;
    Chunk c = buffer(std::max(whole, kChunk));
    if (whole > 0) w.dec.fill_whole(&c, whole);
    else w.dec.fill(&c, kChunk);
    bool end = c.end;
    std::unique_lock<std::mutex> l(mu_);
    auto& q = units_[w.unit].q;
    if (wait) cv_.wait(l, [&] { return stop_ || q.size() < kUnitChunks; });
    if (stop_) return false;
    if (c.size > 0) {
        Chunk last;
        last.error = std::move(c.error);
        last.end = c.end;
        c.end = false;
        q.push_back(std::move(c));
        if (end) q.push_back(std::move(last));
    } else {
        q.push_back(std::move(c));  // an empty end: error or not
    }
    if (end) w.busy = false;
    cv_.notify_all();
    return true;
}

base::Result<std::pair<const char*, size_t>> ZstdReader::next() {
    // Chunks are decoded a MiB at a time but handed out in slices no bigger
    // than libzstd's own output size: the tar reader's header budget
    // (tar_in.h) counts what it is handed, with that much slack.
    for (;;) {
        if (pos_ < current_.size) {
            size_t n = std::min(kSlice, current_.size - pos_);
            const char* p = current_.buf.get() + pos_;
            pos_ += n;
            total_out_ += n;
            return std::pair<const char*, size_t>{p, n};
        }
        if (done_) {
            if (!error_.message.empty()) return error_;
            return std::pair<const char*, size_t>{nullptr, 0};
        }
        std::unique_lock<std::mutex> l(mu_);
        if (current_.buf && spare_.size() < kSpareMax) spare_.push_back(std::move(current_));
        current_ = Chunk();
        pos_ = 0;
        for (;;) {
            if (taking_ == total_units_) {
                done_ = true;
                // Not even one frame: an empty or cut-off file.
                if (total_out_ == 0) error_ = base::error("the patch is truncated (the zstd stream ends mid-frame)");
                break;
            }
            auto it = units_.find(taking_);
            if (it != units_.end() && !it->second.q.empty()) {
                Unit& u = it->second;
                if (!u.seen) {
                    u.seen = true;
                    if (seekable_ && (marks_.empty() || total_out_ - marks_.back().decoded >= kMarkEvery))
                        marks_.push_back({u.begin, total_out_});
                }
                current_ = std::move(u.q.front());
                u.q.pop_front();
                if (current_.end) {
                    if (!current_.error.message.empty()) {
                        done_ = true;
                        error_ = current_.error;
                    }
                    units_.erase(it);
                    taking_++;
                }
                cv_.notify_all();
                break;
            }
            if (inline_) {
                l.unlock();
                bool more = produce(*inline_, false);
                l.lock();
                if (!more && taking_ != total_units_) {
                    done_ = true;
                    error_ = base::error("the patch reader stopped early");
                    break;
                }
                continue;
            }
            cv_.wait(l);
        }
    }
}

}  // namespace capture
