#include "capture/patch/tar_in.h"

#include <unistd.h>

#include <cstring>

namespace capture {

namespace {
const char* const kExtraData =
    "stored data runs past what its size and sparse map account for; the patch is corrupt or hostile";
}  // namespace

void HeaderMeter::add(const char* p, size_t n) {
    total_ += n;
    const char* end = p + n;
    while (p < end) {
        const char* nl = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
        const char* stop = nl ? nl : end;
        size_t len = static_cast<size_t>(stop - p);
        if (line_digits_ && line_len_ + len < kMapLineMax) {
            for (const char* q = p; q < stop; q++)
                if (*q < '0' || *q > '9') {
                    line_digits_ = false;
                    break;
                }
        } else {
            line_digits_ = false;
        }
        line_len_ += len;
        if (!nl) break;
        // libarchive turns every digits-only line of a map (an empty one
        // reads as 0) into half an entry; '#' lines it skips, unallocated.
        if (line_digits_) {
            lines_++;
            map_bytes_ += line_len_ + 1;
        }
        line_len_ = 0;
        line_digits_ = true;
        p = nl + 1;
    }
}

std::string HeaderMeter::over(const HeaderBudget& b, uint64_t slack) const {
    if (header_bytes() > b.max_pax_header + slack)
        return "headers larger than --max-pax-header allows (" + std::to_string(b.max_pax_header) +
               " bytes); raise --max-pax-header if you trust it";
    // Two lines per map entry; digit lines elsewhere (pax values, read-ahead)
    // are bounded by the header bytes and the slack.
    if (lines_ > 2 * b.max_sparse_segments + 2 + b.max_pax_header + slack)
        return "a sparse map of more than " + std::to_string(b.max_sparse_segments) +
               " segments, over the limit; the patch is invalid";
    return "";
}

TarIn::TarIn(int fd, const HeaderBudget& budget) : fd_(fd), z_((::lseek(fd, 0, SEEK_SET), fd)), budget_(budget) {}

TarIn::~TarIn() {
    if (a_) archive_read_free(a_);
}

la_ssize_t TarIn::on_read(struct archive*, void* ctx, const void** buf) {
    auto* self = static_cast<TarIn*>(ctx);
    auto r = self->z_.next();
    if (!r) {
        if (self->z_error_.empty()) self->z_error_ = r.error().message;
        return -1;
    }
    if (self->skipping_) {
        self->skip_handed_ += r->second;
        if (self->skip_handed_ > kHeaderSlack) {
            if (self->z_error_.empty()) self->z_error_ = "member #" + std::to_string(self->index_) + ": " + kExtraData;
            return -1;
        }
    }
    if (self->in_header_) {
        // Refuse while libarchive is still parsing: by the time
        // archive_read_next_header returns, it has allocated all of it.
        self->meter_.add(r->first, r->second);
        std::string why = self->meter_.over(self->budget_, kHeaderSlack);
        if (!why.empty()) {
            if (self->z_error_.empty()) self->z_error_ = "member #" + std::to_string(self->index_) + ": " + why;
            return -1;
        }
    }
    self->last_ = r->first;
    self->last_len_ = r->second;
    self->handed_ += r->second;
    *buf = r->first;
    return static_cast<la_ssize_t>(r->second);
}

base::Error TarIn::fail(const std::string& what) {
    if (!z_error_.empty()) return base::error(z_error_);
    const char* s = a_ ? archive_error_string(a_) : nullptr;
    std::string why = s ? s : "unreadable tar data";
    if (why.find("Truncated") != std::string::npos || why.find("truncated") != std::string::npos)
        why += " (the patch is truncated)";
    return base::error(what + ": " + why);
}

base::Result<void> TarIn::open() {
    a_ = archive_read_new();
    if (!a_) return base::error("libarchive: out of memory");
    // Names are raw bytes whatever the locale; only tar, no other formats or filters.
    if (archive_read_support_format_tar(a_) != ARCHIVE_OK) return fail("setting up the tar reader");
    in_header_ = true;  // the first header may already be read here
    bool ok = archive_read_open(a_, this, nullptr, &TarIn::on_read, nullptr) == ARCHIVE_OK;
    in_header_ = false;
    if (!ok) return fail("not a patch (no tar data inside the zstd stream)");
    return base::Ok();
}

base::Result<archive_entry*> TarIn::next(uint64_t* header_bytes) {
    if (have_entry_) {
        // Data the caller left unread is not header: pass it unmetered.
        // Only the padding to the next 512-byte block is left: the reader
        // reads every member's data. More would be decoded unmetered (data
        // beyond a sparse map, say), so the skip is bounded while it runs.
        skipping_ = true;
        skip_handed_ = 0;
        int r = archive_read_data_skip(a_);
        skipping_ = false;
        if (r != ARCHIVE_OK) return fail("bad member data");
        uint64_t now = static_cast<uint64_t>(archive_filter_bytes(a_, 0));
        if (now - pos_ >= 512) return base::error("member #" + std::to_string(index_) + ": " + kExtraData);
        pos_ = now;
        index_++;
    }
    archive_entry* e = nullptr;
    meter_.reset();
    in_header_ = true;
    int r = archive_read_next_header(a_, &e);
    in_header_ = false;
    have_entry_ = r == ARCHIVE_OK || r == ARCHIVE_WARN;
    uint64_t now = static_cast<uint64_t>(archive_filter_bytes(a_, 0));
    *header_bytes = now - pos_;
    pos_ = now;
    if (r == ARCHIVE_EOF) return static_cast<archive_entry*>(nullptr);
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) {
        const char* s = archive_error_string(a_);
        if (z_error_.empty() && s && std::strstr(s, "Special header too large"))
            return base::error("member #" + std::to_string(index_) +
                               ": a pax or long-name header larger than 1 MiB, more than the tar reader (libarchive) "
                               "takes whatever --max-pax-header says");
        return fail("bad tar member header");
    }
    if (r == ARCHIVE_WARN && !z_error_.empty()) return base::error(z_error_);
    return e;
}

uint64_t TarIn::header_position() {
    la_int64_t p = a_ ? archive_read_header_position(a_) : -1;
    return p < 0 ? UINT64_MAX : static_cast<uint64_t>(p);
}

base::Result<void> TarIn::block(const char** p, size_t* n, int64_t* off) {
    // libarchive reports empty blocks at a sparse file's holes: skip them.
    for (;;) {
        const void* buf = nullptr;
        size_t len = 0;
        la_int64_t o = 0;
        int r = archive_read_data_block(a_, &buf, &len, &o);
        pos_ = static_cast<uint64_t>(archive_filter_bytes(a_, 0));
        if (r == ARCHIVE_EOF) {
            *n = 0;
            return base::Ok();
        }
        if (r != ARCHIVE_OK && r != ARCHIVE_WARN) return fail("bad member data");
        if (len == 0) continue;
        *p = static_cast<const char*>(buf);
        *n = len;
        *off = o;
        return base::Ok();
    }
}

base::Result<void> TarIn::finish(uint64_t max_pad) {
    // libarchive holds the bytes it was handed past the end marker unread
    // (a second tar, say, that GNU `tar -i` would list): they are the tail of
    // the last chunk handed to it. More than that (a partial block it copied
    // aside and did not consume) means a non-zero block followed the first
    // end marker.
    const char* kAfter = "the patch has data after the end of its tar archive; a patch may end only in zero padding";
    uint64_t consumed = a_ ? static_cast<uint64_t>(archive_filter_bytes(a_, 0)) : handed_;
    uint64_t tail = handed_ > consumed ? handed_ - consumed : 0;
    if (tail > last_len_) return base::error(kAfter);
    for (size_t i = last_len_ - tail; i < last_len_; i++)
        if (last_[i] != 0) return base::error(kAfter);
    uint64_t pad = tail;
    for (;;) {
        auto r = z_.next();
        if (!r) return r.error();
        if (r->second == 0) return base::Ok();
        for (size_t i = 0; i < r->second; i++)
            if (r->first[i] != 0) return base::error(kAfter);
        pad += r->second;
        if (pad > max_pad) return base::error("the patch has too much padding after the end of its tar archive");
    }
}

}  // namespace capture
