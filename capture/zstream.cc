// Reading patches: the frames of the file are claimed one at a time, in
// order, by worker threads that each decode whole frames; the caller takes
// the decoded bytes frame after frame. A frame's extent is found by walking
// its block headers (zframe.h); a stream that cannot be walked (not a
// regular file, or something odd in it) is decoded from there to its end by
// one worker, exactly as a single decoder would, errors included.
#include "capture/zstream.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>

#include "capture/zframe.h"
#include "helper/base/fd.h"

namespace capture {

namespace {
constexpr size_t kChunk = size_t{1} << 20;      // decoded and handed over at a time
constexpr size_t kUnitChunks = kFrameBytes / kChunk + 1;  // decoded ahead per frame: a whole one of ours
constexpr size_t kMaxWorkers = 4;
constexpr uint64_t kToEof = UINT64_MAX;
constexpr size_t kReadBytes = size_t{256} << 10;
const size_t kSlice = ZSTD_DStreamOutSize();     // handed out at a time

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
    : fd_(fd), seq_(seq), dctx_(ZSTD_createDCtx()), in_(std::max(kReadBytes, ZSTD_DStreamInSize())) {}

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

// Moves the unread input (keep bytes) to the front and reads more after it.
base::Result<void> ZstdReader::Decoder::refill(size_t keep) {
    if (keep > 0 && in_buf_.pos > 0)
        std::copy(in_.data() + in_buf_.pos, in_.data() + in_buf_.size, in_.data());
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
            if (avail < 5 && !eof_) {
                TRY_VOID(refill(avail));
                continue;
            }
            std::string bad =
                frame_start_problem(reinterpret_cast<const unsigned char*>(in_.data() + in_buf_.pos), avail);
            if (!bad.empty()) return base::error(bad);
            frame_start_ = false;
        }
        ZSTD_outBuffer out{p, room, 0};
        size_t r = ZSTD_decompressStream(dctx_, &out, &in_buf_);
        if (ZSTD_isError(r))
            return base::error(std::string("the patch is corrupt (zstd: ") + ZSTD_getErrorName(r) + ")");
        last_ret_ = r;
        if (r == 0) frame_start_ = true;
        if (out.pos > 0) return out.pos;
    }
}

// ---- scheduling ------------------------------------------------------------

ZstdReader::ZstdReader(int fd, int threads) : fd_(fd) {
    struct stat st;
    off_t at = ::lseek(fd, 0, SEEK_CUR);
    if (at >= 0 && ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        seekable_ = true;
        next_begin_ = static_cast<uint64_t>(at);
        size_ = static_cast<uint64_t>(st.st_size);
    }
    long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    // One worker still decodes beside the caller; more only with CPUs for them.
    size_t n = threads >= 0  ? static_cast<size_t>(threads)
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
        auto at = frame_end(
            [fd](uint64_t off, unsigned char* p, size_t n) {
                return ::pread(fd, p, n, static_cast<off_t>(off)) == static_cast<ssize_t>(n);
            },
            begin, size_);
        if (at) {
            end = *at;
            last = false;
            next_begin_ = end;
        }
    }
    std::lock_guard<std::mutex> l(mu_);
    w.unit = claimed_++;
    units_[w.unit];
    if (last) {
        walk_done_ = true;
        total_units_ = claimed_;
    }
    w.busy = true;
    w.dec.reset(begin, end);
    cv_.notify_all();
    return true;
}

std::unique_ptr<char[]> ZstdReader::buffer() {
    std::lock_guard<std::mutex> l(mu_);
    if (spare_.empty()) return std::unique_ptr<char[]>(new char[kChunk]);
    auto b = std::move(spare_.back());
    spare_.pop_back();
    return b;
}

bool ZstdReader::produce(Worker& w, bool wait) {
    if (!w.busy && !claim(w, wait)) return false;
    Chunk c;
    c.buf = buffer();
    w.dec.fill(&c, kChunk);
    bool end = c.end;
    std::unique_lock<std::mutex> l(mu_);
    auto& q = units_[w.unit];
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
        if (current_.buf) spare_.push_back(std::move(current_.buf));
        current_ = Chunk();
        pos_ = 0;
        for (;;) {
            if (taking_ == total_units_) {
                done_ = true;
                // Not even one frame: an empty or cut-off file.
                if (total_out_ == 0)
                    error_ = base::error("the patch is truncated (the zstd stream ends mid-frame)");
                break;
            }
            auto it = units_.find(taking_);
            if (it != units_.end() && !it->second.empty()) {
                current_ = std::move(it->second.front());
                it->second.pop_front();
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
