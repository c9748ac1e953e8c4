// Reading the tar inside a patch: libarchive's tar reader fed by our zstd
// reader (checksums required), so every error surfaces as one message.
#pragma once
#include <archive.h>
#include <archive_entry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "capture/zstream.h"
#include "helper/base/result.h"

namespace capture {

class TarIn {
public:
    explicit TarIn(int fd);
    ~TarIn();
    TarIn(const TarIn&) = delete;
    TarIn& operator=(const TarIn&) = delete;

    base::Result<void> open();
    // The next member's header, or nullptr at the end of the archive.
    // *header_bytes: uncompressed bytes its headers took (pax records included).
    base::Result<archive_entry*> next(uint64_t* header_bytes);
    // The next data block of the current member; n == 0 at its end.
    base::Result<void> block(const char** p, size_t* n, int64_t* off);
    // After the end of the archive: the rest of the stream must be zero
    // padding (at most max_pad bytes) and end exactly with a complete frame.
    base::Result<void> finish(uint64_t max_pad);
    uint64_t decompressed() const { return z_.total_out(); }

private:
    static la_ssize_t on_read(struct archive*, void* ctx, const void** buf);
    base::Error fail(const std::string& what);

    int fd_;
    ZstdReader z_;
    struct archive* a_ = nullptr;
    std::string z_error_;
    uint64_t pos_ = 0;  // uncompressed offset after the last header/data call
};

}  // namespace capture
