#include "capture/tar_in.h"

#include <unistd.h>

namespace capture {

TarIn::TarIn(int fd) : fd_(fd), z_((::lseek(fd, 0, SEEK_SET), fd)) {}

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
    if (archive_read_support_format_tar(a_) != ARCHIVE_OK)
        return fail("setting up the tar reader");
    if (archive_read_open(a_, this, nullptr, &TarIn::on_read, nullptr) != ARCHIVE_OK)
        return fail("not a patch (no tar data inside the zstd stream)");
    return base::Ok();
}

base::Result<archive_entry*> TarIn::next(uint64_t* header_bytes) {
    archive_entry* e = nullptr;
    int r = archive_read_next_header(a_, &e);
    uint64_t now = static_cast<uint64_t>(archive_filter_bytes(a_, 0));
    *header_bytes = now - pos_;
    pos_ = now;
    if (r == ARCHIVE_EOF) return static_cast<archive_entry*>(nullptr);
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) return fail("bad tar member header");
    if (r == ARCHIVE_WARN && !z_error_.empty()) return base::error(z_error_);
    return e;
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
    // libarchive may already hold buffered bytes past the end marker; those
    // were zero blocks by construction of the tar end. Drain what is left.
    uint64_t pad = 0;
    for (;;) {
        auto r = z_.next();
        if (!r) return r.error();
        if (r->second == 0) return base::Ok();
        for (size_t i = 0; i < r->second; i++)
            if (r->first[i] != 0) return base::error("the patch has data after the end of its tar archive");
        pad += r->second;
        if (pad > max_pad) return base::error("the patch has too much padding after the end of its tar archive");
    }
}

}  // namespace capture
