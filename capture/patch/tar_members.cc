#include "capture/patch/tar_members.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/clock.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"

namespace capture {

using base::Result;

namespace {

// libarchive's pax writer wants a sparse file's holes passed through as bytes
// it then skips without reading; a never-touched read-only mapping supplies
// them without memory or page faults.
constexpr size_t kHoleWindow = size_t{1} << 30;
// read_segments reads a dense file of at most this much in one piece (its chunk).
constexpr uint64_t kWholeMax = uint64_t{1} << 20;
// Tar headers and padding of an original and its file (pax: ~1.5 KiB each).
constexpr size_t kGroupSlack = 4096;

la_ssize_t on_write(struct archive*, void* ctx, const void* buf, size_t len) {
    return static_cast<TarMembers*>(ctx)->write_out(buf, len) ? static_cast<la_ssize_t>(len) : -1;
}

}  // namespace

void fill_entry(archive_entry* e, const TarHead& h) {
    archive_entry_copy_pathname(e, std::string(h.path).c_str());
    unsigned type = h.type == '5' ? AE_IFDIR : h.type == '2' ? AE_IFLNK : h.type == '6' ? AE_IFIFO : AE_IFREG;
    archive_entry_set_filetype(e, type);
    archive_entry_set_perm(e, h.mode & 07777);
    archive_entry_set_uid(e, 0);
    archive_entry_set_gid(e, 0);
    archive_entry_set_mtime(e, h.mtime_ns / 1000000000, static_cast<long>(h.mtime_ns % 1000000000));
    if (h.type == '2') archive_entry_copy_symlink(e, std::string(h.link).c_str());
    if (h.type == '1') archive_entry_copy_hardlink(e, std::string(h.link).c_str());
    archive_entry_set_size(e, static_cast<la_int64_t>(h.size));
}

TarMembers::TarMembers(const std::vector<int>& layer_fds, const WriteOptions& opts, const OpenFile* open_file)
    : opts_(opts), open_file_(open_file), holes_(MAP_FAILED) {
    for (int fd : layer_fds) cursors_.emplace_back(fd);
}

TarMembers::~TarMembers() {
    if (a_) {
        // Not closed (an error, or a chunk maker): free must not end the
        // archive into a sink that may be gone.
        if (!closed_) archive_write_fail(a_);
        archive_write_free(a_);
    }
    if (e_) archive_entry_free(e_);
    if (holes_ != MAP_FAILED) ::munmap(holes_, kHoleWindow);
}

Result<void> TarMembers::open(TarSink* sink) {
    sink_ = sink;
    a_ = archive_write_new();
    e_ = archive_entry_new();
    if (!a_ || !e_) return base::error("libarchive: out of memory");
    // Full pax, not "restricted": only it writes the pax mtime record for a
    // sub-second mtime that needs no other extension (headers stay plain
    // ustar otherwise), and apply/undo restore mtimes to the nanosecond.
    if (archive_write_set_format_pax(a_) != ARCHIVE_OK) return lib_error("setting up the tar writer");
    archive_write_set_bytes_in_last_block(a_, 1);
    // No blocking in libarchive: ZstdWriter cuts frames itself, and a
    // second buffer only copied every byte once more (memmove 12% -> 10%
    // of a save's CPU samples).
    archive_write_set_bytes_per_block(a_, 0);
    if (archive_write_open(a_, this, nullptr, &on_write, nullptr) != ARCHIVE_OK)
        return lib_error("opening the tar writer");
    return base::Ok();
}

bool TarMembers::write_out(const void* p, size_t n) {
    auto r = sink_->write(p, n);
    if (!r && io_error_.empty()) io_error_ = r.error().message;
    return r.ok();
}

Result<void> TarMembers::blob(const std::string& name, std::string_view data, std::string fp) {
    TRY_VOID(begin({name, '0', 0644, 0, data.size(), {}}, name, {}));
    TRY_VOID(put_data(data.data(), data.size(), name));
    sums_.push_back({name, fp.empty() ? fingerprint_bytes(data) : std::move(fp)});
    return base::Ok();
}

Result<void> TarMembers::item(const Item& it, const std::string* link_to) {
    const Change& c = it.change;
    if (!c.captured) return base::Ok();
    std::string name;
    int dirfd = -1;
    // A file the scan kept open needs no parent dir, nor does a
    // deletion (its parent may be a whiteout: a real dir kept around a
    // hidden path, see the scan's gone_around_hidden).
    if (open_file_ || it.fd.valid() || it.whiteout) name = c.path.substr(c.path.rfind('/') + 1);  // npos + 1 == 0
    else {
        if (it.layer >= cursors_.size()) return base::error("no layer holds " + base::display_path(c.path));
        TRY(dirfd, cursors_[it.layer].parent_of(c.path, &name));
    }
    if (name.rfind(".wh.", 0) == 0)
        return base::error("cannot store " + base::display_path(c.path) +
                           ": names starting with .wh. mark deletions in the patch format (OCI); leave it out with "
                           "--ignore " +
                           base::display_path(c.path) + " (or rename it in the session)");
    if (it.whiteout) {
        std::string parent = c.path.substr(0, c.path.size() - name.size());
        return marker(parent + ".wh." + name);
    }
    switch (c.type) {
        case Type::File:
            if (opts_.original) {
                TRY(std::optional<OriginalContent> o, opts_.original(it));
                if (o) {
                    // Both in one frame (the new version compresses against
                    // its original), with the faster settings. The member
                    // before them ends first (its padding), so that a frame
                    // cut there falls between members, wherever they are made.
                    TRY_VOID(end_member());
                    TRY_VOID(sink_->group(o->data.size() + c.size + kGroupSlack, true));
                    TRY_VOID(blob(kOriginalName, o->data, std::move(o->fingerprint)));
                }
            }
            return file(it, dirfd, name, link_to);
        case Type::Dir: {
            TRY_VOID(begin({c.path, '5', c.mode, c.mtime_ns, 0, {}}, c.path, {&c.xattrs, nullptr}));
            sums_.push_back({c.path, fingerprint_bytes("")});
            if (it.opaque) TRY_VOID(marker(c.path + "/.wh..wh..opq"));
            return base::Ok();
        }
        case Type::Symlink: {
            if (open_file_) return symlink(c);
            std::string now(c.link_target.size() + 1, '\0');
            ssize_t n = ::readlinkat(dirfd, name.c_str(), now.data(), now.size());
            if (n < 0 || static_cast<size_t>(n) != c.link_target.size() ||
                now.compare(0, static_cast<size_t>(n), c.link_target) != 0)
                return changed(c.path);
            return symlink(c);
        }
        case Type::Fifo: {
            TRY_VOID(begin({c.path, '6', c.mode, c.mtime_ns, 0, {}}, c.path, {}));
            sums_.push_back({c.path, fingerprint_bytes("")});
            return base::Ok();
        }
        default:
            return base::error("cannot store " + base::display_path(c.path) + ": unsupported type " +
                               type_name(c.type));
    }
}

Result<void> TarMembers::end_member() {
    static const char zeros[512] = {};
    if (hand_open_) {
        hand_open_ = false;
        auto r = sink_->write(zeros, hand_pad_);
        if (!r) return base::error("finishing a member: " + r.error().message);
    }
    if (lib_open_) {
        lib_open_ = false;
        if (archive_write_finish_entry(a_) != ARCHIVE_OK) return io_or_lib("finishing a member");
    }
    return base::Ok();
}

Result<void> TarMembers::close() {
    std::string text = "{\"format\": \"layover-sums/1\",\n \"members\": [";
    text.reserve(text.size() + sums_.size() * 96);
    for (size_t i = 0; i < sums_.size(); i++) {
        text += i ? ",\n  {" : "\n  {";
        base::json::field_bytes(&text, "path", sums_[i].first);
        text += ", \"fingerprint\": ";
        base::json::str(&text, sums_[i].second);
        text += "}";
    }
    text += "]}\n";
    // The sums cover the members before them, so they are not in their own list.
    TRY_VOID(begin({kSumsName, '0', 0644, 0, text.size(), {}}, kSumsName, {}));
    TRY_VOID(put_data(text.data(), text.size(), kSumsName));
    TRY_VOID(end_member());
    closed_ = true;
    if (archive_write_close(a_) != ARCHIVE_OK) return io_or_lib("finishing the tar stream");
    return base::Ok();
}

// One archive_entry for every member, cleared for each: a fresh one is a
// calloc of over 1 KiB, a large-bin request that made glibc consolidate
// its fastbins twice per member (with libarchive's own clone of it in
// the pax writer, ~60,000 malloc_consolidate calls in a 10,000-file save).
archive_entry* TarMembers::entry() { return archive_entry_clear(e_); }

// libarchive's per-member work (its clone of the entry, string conversions,
// the pax attributes built in heap strings) was the largest part of the
// member makers' own CPU left: the plain headers of a patch's common
// members are made by tar_head instead, the same bytes (docs/design.md,
// "Tar headers written by hand").
Result<void> TarMembers::begin(const TarHead& h, const std::string& path, const Extras& x) {
    TRY_VOID(end_member());
    char head[kTarHeadMax];
    size_t n = (x.xattrs && !x.xattrs->empty()) || x.sparse ? 0 : tar_head(h, head);
    if (n > 0) {
        TRY_VOID(write(head, n, path));
        hand_open_ = true;
        hand_pad_ = tar_padding(h.size);
        return base::Ok();
    }
    archive_entry* e = entry();
    fill_entry(e, h);
    if (x.xattrs)
        for (const auto& [k, v] : *x.xattrs) archive_entry_xattr_add_entry(e, k.c_str(), v.data(), v.size());
    if (x.sparse) {
        for (auto [off, len] : *x.sparse)
            archive_entry_sparse_add_entry(e, static_cast<la_int64_t>(off), static_cast<la_int64_t>(len));
        if (x.sparse->empty()) archive_entry_sparse_add_entry(e, static_cast<la_int64_t>(h.size), 0);
    }
    TRY_VOID(header(e, path));
    lib_open_ = true;
    return base::Ok();
}

Result<void> TarMembers::symlink(const Change& c) {
    TRY_VOID(begin({c.path, '2', 0777, c.mtime_ns, 0, c.link_target}, c.path, {}));
    sums_.push_back({c.path, fingerprint_bytes(c.link_target)});
    return base::Ok();
}

Result<void> TarMembers::marker(const std::string& name) {
    TRY_VOID(begin({name, '0', 0, 0, 0, {}}, name, {}));
    sums_.push_back({name, fingerprint_bytes("")});
    return base::Ok();
}

Result<void> TarMembers::file(const Item& it, int dirfd, const std::string& name, const std::string* link_to) {
    const Change& c = it.change;
    // The kept one is closed here when done, on this thread (Item::fd).
    base::Fd opened = std::move(it.fd);
    if (link_to) {
        TRY_VOID(begin({c.path, '1', c.mode, c.mtime_ns, 0, *link_to}, c.path, {&c.xattrs, nullptr}));
        sums_.push_back({c.path, fingerprint_bytes(*link_to)});
        return base::Ok();
    }
    int fd = opened.get();
    if (fd < 0) {
        auto r =
            open_file_ ? (*open_file_)(it) : base::open_at(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK);
        if (!r) {
            if (open_file_) return r.error();
            return base::error("cannot read upper entry " + base::display_path(c.path) + ": " + r.error().message);
        }
        opened = std::move(r.value());
        fd = opened.get();
    }
    struct stat st;
    // With open_file the mtime comes from elsewhere (an original's, kept in a record).
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || static_cast<uint64_t>(st.st_size) != c.size ||
        (!open_file_ && base::time_ns(st.st_mtim.tv_sec, st.st_mtim.tv_nsec) != c.mtime_ns))
        return changed(c.path);
    Segments segs;
    if (static_cast<uint64_t>(st.st_blocks) * 512 >= c.size) {
        // Allocated blocks cover the size: no holes worth keeping, so skip
        // the two SEEK_DATA/SEEK_HOLE probes (most files are like this).
        if (c.size > 0) segs.assign(1, {0, c.size});
    } else {
        TRY(segs, data_segments(fd, c.size));
        // Holes then stored as zeros are data to the reader: the sums
        // are over what is stored, base fingerprints over the real file.
        fit_segments(&segs, opts_.max_sparse_segments);
    }
    if (c.size == 0 && opts_.on_content) notes_ += opts_.on_content(it, std::string_view());
    bool sparse = !(segs.size() == 1 && segs[0].first == 0 && segs[0].second == c.size) && c.size > 0;
    TRY_VOID(begin({c.path, '0', c.mode, c.mtime_ns, c.size, {}}, c.path, {&c.xattrs, sparse ? &segs : nullptr}));
    Fingerprint fp;
    uint64_t pos = 0;
    // The content hook: a dense file comes in one piece; a sparse one
    // (rare) is assembled, holes as zeros.
    bool hook = c.size > 0 && c.size <= kWholeMax && opts_.on_content;
    std::string pieces;
    if (hook && sparse) pieces.assign(c.size, '\0');
    auto chunk = [&](uint64_t off, const char* p, size_t n) -> Result<void> {
        if (off > pos) {
            auto r = skip_hole(off - pos, c.path);
            if (!r) return r;
        }
        if (hook && !sparse && off == 0 && n == c.size) notes_ += opts_.on_content(it, std::string_view(p, n));
        if (hook && sparse) pieces.replace(off, n, p, n);
        fp.data(off, p, n);
        pos = off + n;
        return put_data(p, n, c.path);
    };
    if (auto r = read_segments(fd, segs, chunk); !r) {
        // Cut short by a writer (a running session truncating it): said
        // as the other changes are, with the path, not as a bare read error.
        // (A truncation or write sets the ctime, also when the size is back.)
        struct stat now;
        if (::fstat(fd, &now) == 0 && now.st_size == st.st_size && now.st_ctim.tv_sec == st.st_ctim.tv_sec &&
            now.st_ctim.tv_nsec == st.st_ctim.tv_nsec)
            return r.error();
        return changed(c.path);
    }
    if (sparse && pos < c.size) TRY_VOID(skip_hole(c.size - pos, c.path));
    if (hook && sparse) notes_ += opts_.on_content(it, pieces);
    sums_.push_back({c.path, fp.finish(c.size)});
    return base::Ok();
}

Result<void> TarMembers::skip_hole(uint64_t len, const std::string& path) {
    if (holes_ == MAP_FAILED) {
        holes_ = ::mmap(nullptr, kHoleWindow, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (holes_ == MAP_FAILED) return base::sys_error("mapping a hole window");
    }
    while (len > 0) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(len, kHoleWindow));
        TRY_VOID(put_data(holes_, n, path));
        len -= n;
    }
    return base::Ok();
}

Result<void> TarMembers::header(archive_entry* e, const std::string& path) {
    int r = archive_write_header(a_, e);
    if (r != ARCHIVE_OK && r != ARCHIVE_WARN) return io_or_lib("writing member " + base::display_path(path));
    return base::Ok();
}

Result<void> TarMembers::write(const void* p, size_t n, const std::string& path) {
    auto r = sink_->write(p, n);
    if (!r) return base::error("writing member " + base::display_path(path) + ": " + r.error().message);
    return base::Ok();
}

Result<void> TarMembers::put_data(const void* p, size_t n, const std::string& path) {
    if (hand_open_) return write(p, n, path);
    while (n > 0) {
        la_ssize_t w = archive_write_data(a_, p, n);
        if (w < 0) return io_or_lib("writing member " + base::display_path(path));
        if (w == 0) return base::Ok();  // libarchive consumed the whole entry (trailing hole)
        p = static_cast<const char*>(p) + w;
        n -= static_cast<size_t>(w);
    }
    return base::Ok();
}

base::Error TarMembers::changed(const std::string& path) {
    // With open_file the bytes come from the caller's opener, not a running session's upper.
    if (open_file_) return base::error(base::display_path(path) + " changed while the patch was being written");
    return base::error("upper entry " + base::display_path(path) +
                       " changed while the patch was being written (the session is running); try again, or stop "
                       "the session first");
}

base::Error TarMembers::lib_error(const std::string& what) {
    return base::error(what + ": " + (archive_error_string(a_) ? archive_error_string(a_) : "libarchive failed"));
}

base::Error TarMembers::io_or_lib(const std::string& what) {
    if (!io_error_.empty()) return base::error(what + ": " + io_error_);
    return lib_error(what);
}

}  // namespace capture
