// zstd framing of patch files, driven directly through libzstd so frame
// checksums are always on when writing and always required when reading.
//
// Patches are written as a sequence of independent frames of at most kFrameBytes of
// tar each (any zstd tool reads them as one stream), so that reading can
// decode several frames at once: a patch is decompressed twice by apply
// (validate, then stage), and one decoding thread was the slowest part.
#pragma once
#include <zstd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "helper/base/result.h"

namespace capture {

// Uncompressed bytes per frame. A frame restarts zstd's history, but level 1
// only looks 512 KiB back: 1 MiB frames made the 1 GiB bench patch 0.004%
// and the 10k-file one 0.02% larger than one frame, and the buffers that
// hold whole frames (writing and reading) stay small.
inline constexpr size_t kFrameBytes = size_t{1} << 20;

// Frames holding originals (ZstdWriter::group): level 1's fast strategy
// with this targetLength (its step acceleration) and Huffman-coded literals
// kept on (zstd turns them off for any targetLength on its own). The same
// format and window; ~20% less CPU, and a patch of text ~0-10% larger.
inline constexpr int kFastTargetLength = 16;
// And this hashLog (level 1 takes 14 for a frame of 256 KiB): the table
// finds more of an original's matches in the file after it, so fewer bytes
// go out as literals; ~9% less zstd CPU for the same size, where it made
// frames without originals ~50% slower (docs/performance.md, "Save, round 11").
inline constexpr int kFastHashLog = 16;

// Compresses everything written to it into fd (level 1, checksums on),
// kFrameBytes per frame. With more than one CPU, full frames are compressed
// by worker threads while the caller goes on, and written in order.
class ZstdWriter {
public:
    // threads: worker threads at most; -1 as many as CPUs (none on one CPU), 0 none.
    explicit ZstdWriter(int fd, int level = 1, int threads = -1);
    // Compressed frames handed to `out` as they are made, on the calling
    // thread (no workers, no file): a save thread compressing its own chunk
    // (docs/performance.md, "Save, round 10").
    using Out = std::function<base::Result<void>(const char*, size_t)>;
    explicit ZstdWriter(Out out, int level = 1);
    ~ZstdWriter();
    ZstdWriter(const ZstdWriter&) = delete;
    ZstdWriter& operator=(const ZstdWriter&) = delete;
    base::Result<void> write(const void* p, size_t len);
    base::Result<void> finish();  // the last frame, everything written
    // The caller fsyncs the file once finished (a patch renamed into place
    // only when complete): what is written is also flushed to the disk every
    // few MiB by a thread of its own, so that fsync waits only for the tail.
    // Otherwise it is only handed to writeback (sync_file_range).
    void flush_as_written() { durable_ = true; }
    // The next `bytes` written belong together (an original and the new
    // version that compresses against it): a frame at least half full that
    // cannot take them all is cut first, so they share a frame. `fast`: the
    // frames holding them use faster settings (kFastTargetLength).
    base::Result<void> group(size_t bytes, bool fast);
    // Ends the frame being filled (if any): the next bytes start a frame,
    // and no group before this point makes it fast. Called at each chunk's
    // start, so that frames are the same whichever thread compresses them.
    base::Result<void> cut();
    // Whole frames compressed elsewhere (by a ZstdWriter(Out) over the same
    // bytes after a cut()), `raw` bytes of tar, written in order after the
    // frames before them.
    base::Result<void> write_frames(const char* p, size_t n, uint64_t raw);

private:
    struct Buf {
        std::unique_ptr<char[]> p;
        size_t size = 0, cap = 0;
    };
    struct Job {
        Buf in, out;
        std::string error;
        bool done = false;
        bool fast = false;
    };
    base::Result<void> submit(bool more);     // the current frame to a worker (or here); more: not the last
    base::Result<void> write_done(bool all);  // finished frames, in order; all: wait for every one
    void work();
    Buf take_buf(size_t cap);
    void start_writeback(bool all);
    bool ask_flush();
    struct Flusher;
    int fd_;
    int level_;
    Out out_;  // set: frames go there, not to fd_
    size_t workers_wanted_ = 0;
    Buf cur_;               // the frame being filled
    uint64_t in_ = 0;       // bytes written so far (the end of cur_)
    uint64_t fast_to_ = 0;  // group(fast): frames holding bytes before this are fast
    bool any_frame_ = false;
    ZSTD_CCtx* inline_cctx_ = nullptr;  // no worker threads
    std::vector<Buf> spare_;            // recycled buffers
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<std::shared_ptr<Job>> jobs_;  // submitted, in order (done or not)
    std::deque<std::shared_ptr<Job>> todo_;  // not yet taken by a worker
    std::vector<std::thread> threads_;
    bool stop_ = false;
    int64_t start_ = -1;      // fd offset where we began; -1: not a seekable file
    uint64_t written_ = 0;    // bytes written since start_
    uint64_t writeback_ = 0;  // bytes handed to writeback so far
    bool durable_ = false;    // flush_as_written
    std::shared_ptr<Flusher> flusher_;
};

// Decompresses a zstd file, requiring a checksum in every frame (verified by
// libzstd) and a complete last frame: a truncated or corrupt file is an error.
// Worker threads decode ahead (a few MiB, bounded) while the caller parses
// what came before; each takes a whole frame at a time, so frames written by
// ZstdWriter decode side by side. Bytes always come out in stream order, and
// an error in a frame is reported after the frames before it.
class ZstdReader {
public:
    // threads: decoding threads at most; -1 as many as CPUs (up to 4; one
    // for a file that is not regular), 0 none (the caller decodes as it reads).
    // start: where in the file the stream begins (a frame start); by default
    // the fd's current offset.
    static constexpr uint64_t kHere = UINT64_MAX;
    explicit ZstdReader(int fd, int threads = -1, uint64_t start = kHere);
    ~ZstdReader();
    ZstdReader(const ZstdReader&) = delete;
    ZstdReader& operator=(const ZstdReader&) = delete;
    // Next chunk of decompressed bytes; empty at the clean end of the stream.
    // Valid until the next call.
    base::Result<std::pair<const char*, size_t>> next();
    uint64_t total_out() const { return total_out_; }
    // Places a reader may start again: (file offset of a frame, decoded
    // bytes before it), for frames reached so far, about one per MiB.
    struct Mark {
        uint64_t file = 0, decoded = 0;
    };
    const std::vector<Mark>& marks() const { return marks_; }

private:
    struct Chunk {
        std::unique_ptr<char[]> buf;  // cap bytes (recycled)
        size_t cap = 0;
        size_t size = 0;
        base::Error error;  // message "" when none
        bool end = false;   // the unit's last chunk (with its error, if any)
    };
    // Decodes the frames in one byte range of the file.
    class Decoder {
    public:
        Decoder(int fd, bool seq);  // seq: read() on, not pread()
        ~Decoder();
        void reset(uint64_t begin, uint64_t end);  // end == UINT64_MAX: to the end of the file
        // Decodes into c.buf up to want bytes (fewer only at the unit's end).
        void fill(Chunk* c, size_t want);
        // The decoded size of the range when it is one frame that says its
        // size and is small enough to decode in one call; else 0.
        size_t whole_size();
        // Decodes that frame into c.buf (of at least whole_size() bytes) in
        // one call, straight into place: streaming would decode into zstd's
        // own window and copy out.
        void fill_whole(Chunk* c, size_t size);

    private:
        base::Result<size_t> step(char* p, size_t room);  // 0 bytes only at the clean end
        base::Result<void> refill(size_t keep);
        int fd_;
        bool seq_;
        ZSTD_DCtx* dctx_;
        std::vector<char> in_;
        ZSTD_inBuffer in_buf_{nullptr, 0, 0};
        uint64_t pos_ = 0, end_ = 0;
        bool eof_ = false;
        bool frame_start_ = true;
        size_t last_ret_ = 0;
    };
    struct Worker {
        Worker(int fd, bool seq) : dec(fd, seq) {}
        Decoder dec;
        bool busy = false;   // has a unit
        bool fresh = false;  // nothing of it decoded yet
        uint64_t unit = 0;
    };
    bool claim(Worker& w, bool wait);
    bool produce(Worker& w, bool wait);  // one chunk; false when there is no more work
    Chunk buffer(size_t cap);

    int fd_;
    bool seekable_ = false;
    uint64_t size_ = 0;
    size_t ahead_ = 1;         // units claimed at most beyond the one being read
    std::mutex claim_mu_;      // held while finding the next unit (before mu_)
    uint64_t next_begin_ = 0;  // where the next unclaimed unit starts
    bool walk_done_ = false;   // no unit left to claim
    std::mutex mu_;
    std::condition_variable cv_;
    struct Unit {
        uint64_t begin = 0;   // file offset of its first frame
        bool seen = false;    // the caller reached it
        std::deque<Chunk> q;  // decoded, not yet handed out
    };
    std::map<uint64_t, Unit> units_;
    uint64_t claimed_ = 0;  // units claimed so far
    uint64_t total_units_ = UINT64_MAX;
    uint64_t taking_ = 0;       // the unit the caller is reading
    std::vector<Chunk> spare_;  // buffers handed back, to be reused
    bool stop_ = false;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::vector<std::thread> threads_;
    std::unique_ptr<Worker> inline_;  // no threads: the caller decodes
    Chunk current_;
    size_t pos_ = 0;  // in current_: handed out up to here
    bool done_ = false;
    base::Error error_;
    uint64_t total_out_ = 0;
    std::vector<Mark> marks_;
};

}  // namespace capture
