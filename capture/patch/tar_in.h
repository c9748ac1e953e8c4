// Reading the tar inside a patch: libarchive's tar reader fed by our zstd
// reader (checksums required), so every error surfaces as one message.
#pragma once
#include <archive.h>
#include <archive_entry.h>

#include <cstdint>
#include <memory>
#include <string>

#include "capture/patch/zstream.h"
#include "helper/base/result.h"

namespace capture {

// What libarchive may take in while it parses one member's headers. It
// allocates as it parses (a sparse map costs ~50 bytes per entry), so the
// limits are enforced on the bytes it is handed, before it has them all.
struct HeaderBudget {
    uint64_t max_pax_header = 1 << 20;         // header bytes, sparse-map lines not counted
    uint64_t max_sparse_segments = 1'000'000;  // entries of one GNU sparse 1.0 map
};

// How the bytes handed to libarchive during one header split up (pure, so
// the budget rules are unit-testable): lines of 1..kMapLineMax digits are
// what a GNU sparse 1.0 map is made of, everything else counts as header.
class HeaderMeter {
public:
    static constexpr size_t kMapLineMax = 100;  // libarchive's own limit for one map line
    void reset() { *this = HeaderMeter(); }
    void add(const char* p, size_t n);
    uint64_t header_bytes() const { return total_ - map_bytes_; }
    uint64_t map_bytes() const { return map_bytes_; }
    uint64_t lines() const { return lines_; }
    // "" while within budget (slack: bytes handed beyond the header itself,
    // since libarchive reads ahead by up to one decompressed chunk), else why not.
    std::string over(const HeaderBudget& b, uint64_t slack) const;

private:
    uint64_t total_ = 0, map_bytes_ = 0, lines_ = 0;
    size_t line_len_ = 0;  // the current (unfinished) line
    bool line_digits_ = true;
};

class TarIn {
public:
    explicit TarIn(int fd, const HeaderBudget& budget = {});
    ~TarIn();
    TarIn(const TarIn&) = delete;
    TarIn& operator=(const TarIn&) = delete;

    base::Result<void> open();
    // The next member's header, or nullptr at the end of the archive.
    // *header_bytes: uncompressed bytes its headers took (pax records and a
    // GNU sparse 1.0 map included).
    base::Result<archive_entry*> next(uint64_t* header_bytes);
    // The next data block of the current member; n == 0 at its end.
    base::Result<void> block(const char** p, size_t* n, int64_t* off);
    // After the end of the archive: the rest of the stream must be zero
    // padding (at most max_pad bytes) and end exactly with a complete frame.
    base::Result<void> finish(uint64_t max_pad);
    uint64_t decompressed() const { return z_.total_out(); }
    // Decoded-stream offsets: where the current member's data begins (just
    // after next() returned it), and where its first header began.
    uint64_t position() const { return pos_; }
    uint64_t header_position();
    const ZstdReader& stream() const { return z_; }

    // Bytes libarchive may be handed past a header's end (read-ahead), and
    // the budget check's allowance for it.
    static constexpr uint64_t kHeaderSlack = 256 << 10;

private:
    static la_ssize_t on_read(struct archive*, void* ctx, const void** buf);
    base::Error fail(const std::string& what);

    int fd_;
    ZstdReader z_;
    struct archive* a_ = nullptr;
    std::string z_error_;
    uint64_t pos_ = 0;  // uncompressed offset after the last header/data call
    HeaderBudget budget_;
    HeaderMeter meter_;
    bool in_header_ = false;  // inside archive_read_next_header: meter what it is handed
    bool have_entry_ = false;
    uint64_t index_ = 0;     // the member whose header is being read
    bool skipping_ = false;  // inside archive_read_data_skip: only padding may be left
    uint64_t skip_handed_ = 0;
    // The last chunk handed to libarchive (valid until z_.next() is called
    // again) and all bytes handed so far: what it buffered past the end of
    // the archive is checked from these.
    const char* last_ = nullptr;
    size_t last_len_ = 0;
    uint64_t handed_ = 0;
};

}  // namespace capture
