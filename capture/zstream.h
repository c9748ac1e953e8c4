// zstd framing of patch files, driven directly through libzstd so frame
// checksums are always on when writing and always required when reading.
#pragma once
#include <zstd.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "helper/base/result.h"

namespace capture {

// Compresses everything written to it into fd (level 1, checksums on, zstd's
// own worker threads when the machine has more than one CPU).
class ZstdWriter {
public:
    explicit ZstdWriter(int fd, int level = 1);
    ~ZstdWriter();
    ZstdWriter(const ZstdWriter&) = delete;
    ZstdWriter& operator=(const ZstdWriter&) = delete;
    base::Result<void> write(const void* p, size_t len);
    base::Result<void> finish();  // end the frame and flush

private:
    base::Result<void> drive(const void* p, size_t len, ZSTD_EndDirective mode);
    void start_writeback(bool all);
    int fd_;
    ZSTD_CCtx* cctx_;
    std::vector<char> out_;
    std::string error_;
    int64_t start_ = -1;        // fd offset where we began; -1: not a seekable file
    uint64_t written_ = 0;      // bytes written since start_
    uint64_t writeback_ = 0;    // bytes handed to writeback so far
};

// Decompresses a zstd file, requiring a checksum in every frame (verified by
// libzstd) and a complete last frame: a truncated or corrupt file is an error.
// A second thread decompresses ahead (a few MiB, bounded) while the caller
// parses what came before, the way `tar --zstd` runs zstd beside tar.
class ZstdReader {
public:
    explicit ZstdReader(int fd);
    ~ZstdReader();
    ZstdReader(const ZstdReader&) = delete;
    ZstdReader& operator=(const ZstdReader&) = delete;
    // Next chunk of decompressed bytes; empty at the clean end of the stream.
    // Valid until the next call.
    base::Result<std::pair<const char*, size_t>> next();
    uint64_t total_out() const { return total_out_; }

private:
    struct Chunk {
        std::unique_ptr<char[]> buf;  // kChunk bytes (recycled)
        size_t size = 0;              // 0: the end, or the error
        base::Error error;            // message "" when none
        bool end = false;             // the decoder stopped here (end or error)
    };
    // The decoder, run on the prefetch thread (or inline when there is none).
    class Decoder {
    public:
        explicit Decoder(int fd);
        ~Decoder();
        // Decodes into c.buf up to want bytes (fewer only at the end).
        void fill(Chunk* c, size_t want);

    private:
        // Decodes into [p, p + room); 0 bytes only at the clean end.
        base::Result<size_t> step(char* p, size_t room);
        int fd_;
        ZSTD_DCtx* dctx_;
        std::vector<char> in_;
        ZSTD_inBuffer in_buf_{nullptr, 0, 0};
        bool eof_ = false;
        bool frame_start_ = true;
        size_t last_ret_ = 0;
        uint64_t total_ = 0;
    };
    void prefetch();
    void decode_into(std::deque<Chunk>* q);  // one fill: its data, then the end

    Decoder dec_;
    std::thread thread_;
    std::mutex mu_;
    std::condition_variable cv_;
    std::deque<Chunk> ready_;
    std::vector<std::unique_ptr<char[]>> spare_;  // buffers handed back
    bool stop_ = false;
    bool threaded_ = false;
    Chunk current_;
    size_t pos_ = 0;  // in current_: handed out up to here
    bool done_ = false;
    uint64_t total_out_ = 0;
};

}  // namespace capture
