// zstd framing of patch files, driven directly through libzstd so frame
// checksums are always on when writing and always required when reading.
#pragma once
#include <zstd.h>

#include <cstdint>
#include <string>
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
class ZstdReader {
public:
    explicit ZstdReader(int fd);
    ~ZstdReader();
    ZstdReader(const ZstdReader&) = delete;
    ZstdReader& operator=(const ZstdReader&) = delete;
    // Next chunk of decompressed bytes; empty at the clean end of the stream.
    base::Result<std::pair<const char*, size_t>> next();
    uint64_t total_out() const { return total_out_; }

private:
    int fd_;
    ZSTD_DCtx* dctx_;
    std::vector<char> in_, out_;
    ZSTD_inBuffer in_buf_{nullptr, 0, 0};
    bool eof_ = false;
    bool frame_start_ = true;
    size_t last_ret_ = 0;
    uint64_t total_out_ = 0;
};

}  // namespace capture
