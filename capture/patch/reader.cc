#include "capture/patch/reader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <set>
#include <string_view>

#include "capture/patch/agreement.h"
#include "capture/patch/manifest.h"
#include "capture/patch/path_map.h"
#include "capture/patch/reader_impl.h"
#include "capture/patch/tar_in.h"
#include "capture/patch/writer.h"
#include "capture/scan/fingerprint.h"
#include "capture/scan/names.h"
#include "capture/scan/xattr.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/base/thread.h"

namespace capture {

using base::Result;

namespace {

std::string lim(uint64_t v) { return std::to_string(v); }

// Error messages stay one readable line even for absurdly long names.
std::string shown(const std::string& name) {
    std::string d = base::display_path(name);
    return d.size() > 200 ? d.substr(0, 200) + "..." : d;
}

const char* member_kind_word(Member::Kind k) {
    switch (k) {
        case Member::Kind::Dir: return "directory";
        case Member::Kind::Symlink: return "symlink";
        case Member::Kind::Hardlink: return "hardlink";
        case Member::Kind::Fifo: return "fifo";
        default: return "special";
    }
}

// size: what the header says (a hint: the data is checked against limit).
Result<std::string> read_small(TarIn& t, uint64_t limit, const std::string& what, int64_t size) {
    std::string out;
    // One allocation instead of doubling: a 10k-file manifest is megabytes,
    // and copying it while it grows touched fresh memory for each copy.
    if (size > 0) out.reserve(static_cast<size_t>(std::min<uint64_t>(static_cast<uint64_t>(size), limit)));
    for (;;) {
        const char* p;
        size_t n;
        int64_t off;
        TRY_VOID(t.block(&p, &n, &off));
        if (n == 0) return out;
        if (static_cast<uint64_t>(off) != out.size()) return base::error(what + " is stored sparse, which is invalid");
        if (out.size() + n > limit) return base::error(what + " is larger than " + lim(limit) + " bytes");
        out.append(p, n);
    }
}

// One member's header turned into a Member, with every per-member rule.
class Validator {
public:
    explicit Validator(const Limits& l) : l_(l), paths_(0, true) {}
    // Room for the members the patch likely has (estimate: an upper bound,
    // about twice what most patches hold; the map grows past it if need be).
    void reserve(size_t estimate) { paths_.reserve(estimate / 2); }

    Result<Member> member(archive_entry* e, std::string* tar_name) {
        const char* raw = archive_entry_pathname(e);
        if (!raw) return base::error("a member has no name");
        std::string name = raw;
        unsigned ft = archive_entry_filetype(e);
        const char* hl = archive_entry_hardlink(e);
        if (ft == AE_IFDIR && name.size() > 1 && name.back() == '/') name.pop_back();
        // Built only for an error: most patches have none, and many members.
        auto where = [&name] { return "member " + shown(name) + ": "; };
        std::string bad = check_relative_path(name, l_.max_name_len);
        if (!bad.empty()) return base::error(where() + bad);
        *tar_name = name;
        Member m;
        std::string path;
        NameRole role = name_role(name, &path);
        if (role == NameRole::Reserved) return base::error(where() + "a reserved whiteout name");
        m.path = path;
        m.mode = archive_entry_perm(e) & 07777;
        if (__builtin_mul_overflow(static_cast<int64_t>(archive_entry_mtime(e)), int64_t{1000000000}, &m.mtime_ns) ||
            __builtin_add_overflow(m.mtime_ns, static_cast<int64_t>(archive_entry_mtime_nsec(e)), &m.mtime_ns))
            return base::error(where() + "an mtime out of range (beyond the year 2262)");
        if (hl) {
            std::string target = hl;
            bad = check_relative_path(target, l_.max_name_len);
            if (!bad.empty()) return base::error(where() + "hardlink target: " + bad);
            const uint32_t* seen = paths_.find(target);
            if (!seen || !(*seen & kFile))
                return base::error(where() + "hardlink to " + base::display_path(target) +
                                   ", which is not an earlier file member of the patch");
            m.kind = Member::Kind::Hardlink;
            m.link_target = target;
        } else if (ft == AE_IFREG) {
            m.kind = Member::Kind::File;
            m.size = static_cast<uint64_t>(archive_entry_size(e));
        } else if (ft == AE_IFDIR) {
            m.kind = Member::Kind::Dir;
        } else if (ft == AE_IFLNK) {
            m.kind = Member::Kind::Symlink;
            const char* t = archive_entry_symlink(e);
            m.link_target = t ? t : "";
            if (m.link_target.empty() || m.link_target.size() > l_.max_name_len)
                return base::error(where() + "invalid symlink target");
        } else if (ft == AE_IFIFO) {
            m.kind = Member::Kind::Fifo;
        } else {
            return base::error(where() + "a device node or socket, which patches never contain");
        }
        // Only regular files carry data; libarchive would skip any other
        // member's (a pax hardlink, a GNU dumpdir) unread and unmetered.
        if (m.kind != Member::Kind::File && archive_entry_size(e) != 0)
            return base::error(where() + "a " + member_kind_word(m.kind) +
                               " member that carries data, which only regular files do");
        if (role != NameRole::Plain) {
            if (m.kind != Member::Kind::File || m.size != 0)
                return base::error(where() + "a whiteout must be an empty regular file");
            m.kind = role == NameRole::Whiteout ? Member::Kind::Whiteout : Member::Kind::Opaque;
        }
        TRY_VOID(place(m, where));
        TRY_VOID(attrs(e, &m, where));
        return m;
    }

    Result<void> add_stored(uint64_t n) {
        stored_ += n;
        if (stored_ > l_.max_stored_bytes)
            return base::error("the patch holds more than " + lim(l_.max_stored_bytes) +
                               " bytes of data (a zstd bomb?); raise --max-stored-bytes if you trust it");
        return base::Ok();
    }

private:
    // What the patch does to each path (PathMap values): one entry per path
    // member, and one per dir above a written one.
    static constexpr uint32_t kWritten = 1;    // a member other than a whiteout or an opaque mark
    static constexpr uint32_t kDeleted = 2;    // a whiteout
    static constexpr uint32_t kOpaque = 4;     // an opaque mark
    static constexpr uint32_t kDir = 8;        // a dir member
    static constexpr uint32_t kFile = 16;      // a regular file member (what a hard link may name)
    static constexpr uint32_t kBelow = 32;     // a written member lies beneath it
    static constexpr uint32_t kLeafShift = 8;  // the kind of a non-dir member, + 1 (0: none)
    static constexpr uint32_t kLeafMask = 0xfu << kLeafShift;
    static uint32_t leaf_bits(Member::Kind k) { return (static_cast<uint32_t>(k) + 1) << kLeafShift; }
    static const char* leaf_word(uint32_t v) {
        auto k = static_cast<Member::Kind>(((v & kLeafMask) >> kLeafShift) - 1);
        return k == Member::Kind::File ? "file" : member_kind_word(k);
    }
    // The dir above p (p shortened to it), false at the top.
    static bool up(std::string_view* p) {
        auto slash = p->rfind('/');
        if (slash == std::string_view::npos) return false;
        *p = p->substr(0, slash);
        return true;
    }

    // Duplicates, and paths both deleted and written.
    template <class Where>
    Result<void> place(const Member& m, const Where& where) {
        // Nothing lies beneath a member that is not a directory (a symlink
        // `a` then `a/x` would write through it, `f` then `f/x` cannot be).
        for (std::string_view p = m.path; leaves_ > 0 && up(&p);) {
            const uint32_t* v = paths_.find(p);
            if (v && (*v & kLeafMask))
                return base::error(where() + "lies beneath member " + shown(std::string(p)) + ", which is a " +
                                   leaf_word(*v) + ", not a directory; the patch is invalid");
        }
        uint32_t* v = paths_.get(m.path);
        if (m.kind != Member::Kind::Dir && m.kind != Member::Kind::Whiteout && m.kind != Member::Kind::Opaque &&
            !(*v & kLeafMask)) {
            *v |= leaf_bits(m.kind);
            leaves_++;
        }
        if (m.kind == Member::Kind::Whiteout) {
            if (*v & kDeleted) return base::error(where() + "deletes a path twice");
            if (*v & kWritten) return base::error(where() + "deletes a path the patch also writes");
            if (*v & kBelow) return base::error(where() + "deletes a dir the patch also writes into");
            *v |= kDeleted;
            deleted_++;
            return base::Ok();
        }
        if (m.kind == Member::Kind::Opaque) {
            if (!(*v & kDir)) return base::error(where() + "marks a dir opaque that is not an earlier dir member");
            if (*v & kOpaque) return base::error(where() + "marks a dir opaque twice");
            *v |= kOpaque;
            return base::Ok();
        }
        if (*v & kWritten) return base::error(where() + "duplicate path");
        if (*v & kDeleted) return base::error(where() + "writes a path the patch also deletes");
        *v |= kWritten | (m.kind == Member::Kind::Dir ? kDir : 0) | (m.kind == Member::Kind::File ? kFile : 0);
        // Mark the dirs above (a later whiteout of one is refused); those
        // marked already have theirs marked, unless a dir above may be deleted.
        for (std::string_view p = m.path; up(&p);) {
            uint32_t* d = paths_.get(p);
            if (*d & kDeleted) return base::error(where() + "writes a path the patch also deletes");
            if ((*d & kBelow) && deleted_ == 0) break;
            *d |= kBelow;
        }
        return base::Ok();
    }

    template <class Where>
    Result<void> attrs(archive_entry* e, Member* m, const Where& where) {
        archive_entry_xattr_reset(e);
        const char* xn;
        const void* xv;
        size_t xs;
        while (archive_entry_xattr_next(e, &xn, &xv, &xs) == ARCHIVE_OK) {
            std::string n = xn ? xn : "", v(static_cast<const char*>(xv), xs);
            auto [it, fresh] = m->xattrs.emplace(n, v);
            if (!fresh && it->second != v)
                return base::error(where() + "carries xattr " + shown(n) + " twice with different values");
        }
        // libarchive's reader leaves the SCHILY.xattr copy of a name URL-encoded
        // (its LIBARCHIVE.xattr copy decoded): drop a name that is the
        // encoding of another one with the same value.
        for (auto it = m->xattrs.begin(); it != m->xattrs.end(); ++it) {
            std::string enc = xattr_key_encode(it->first);
            if (enc == it->first) continue;
            auto copy = m->xattrs.find(enc);
            if (copy != m->xattrs.end() && copy->second == it->second) m->xattrs.erase(copy);
        }
        for (const auto& [n, v] : m->xattrs)
            if (n.compare(0, 5, "user.") != 0)
                return base::error(where() + "carries xattr " + base::display_path(n) +
                                   "; patches hold only user.* xattrs");
        if (std::string why = xattr_limit_problem(m->xattrs); !why.empty()) return base::error(where() + why);
        if (m->kind != Member::Kind::File) {
            if (archive_entry_sparse_count(e) > 0) return base::error(where() + "sparse map on a non-file");
            return base::Ok();
        }
        logical_ += m->size;
        if (m->size > l_.max_logical_bytes || logical_ > l_.max_logical_bytes)
            return base::error(where() + "the patch's files add up to more than " + lim(l_.max_logical_bytes) +
                               " bytes (logical size); raise --max-logical-bytes if you trust it");
        // Data segments are limited; a map may also end in one empty entry
        // (the writer's mark for a file that ends in a hole).
        int count = archive_entry_sparse_count(e);
        if (count < 0 || static_cast<uint64_t>(count) > l_.max_sparse_segments + 1)
            return base::error(where() + "too many sparse segments (the limit is " + lim(l_.max_sparse_segments) + ")");
        archive_entry_sparse_reset(e);
        la_int64_t off, len;
        uint64_t end = 0;
        while (archive_entry_sparse_next(e, &off, &len) == ARCHIVE_OK) {
            if (off < 0 || len < 0 || static_cast<uint64_t>(off) < end ||
                static_cast<uint64_t>(off) + static_cast<uint64_t>(len) > m->size)
                return base::error(where() + "invalid sparse map");
            end = static_cast<uint64_t>(off + len);
            if (len > 0) m->sparse.emplace_back(static_cast<uint64_t>(off), static_cast<uint64_t>(len));
        }
        if (m->sparse.size() > l_.max_sparse_segments)
            return base::error(where() + "too many sparse segments (the limit is " + lim(l_.max_sparse_segments) + ")");
        if (count > 0 && m->sparse.empty() && m->size > 0) m->sparse.emplace_back(m->size, 0);
        return base::Ok();
    }

    const Limits& l_;
    uint64_t stored_ = 0, logical_ = 0;
    PathMap paths_;
    uint64_t leaves_ = 0, deleted_ = 0;  // non-dir members, whiteouts
};

// A file member's data, bounds-checked, fingerprinted and passed on;
// *stored: the bytes it took in the stream.
Result<std::string> stream_data(TarIn& t, const Member& m, Validator* v, const DataSink& sink,
                                uint64_t* stored = nullptr) {
    Fingerprint fp;
    uint64_t next = 0, total = 0;
    for (;;) {
        const char* p;
        size_t n;
        int64_t off;
        TRY_VOID(t.block(&p, &n, &off));
        if (n == 0) break;
        uint64_t o = static_cast<uint64_t>(off);
        if (off < 0 || o < next || o + n > m.size)
            return base::error("member " + base::display_path(m.path) + ": data outside its declared size");
        next = o + n;
        total += n;
        if (v) TRY_VOID(v->add_stored(n));
        fp.data(o, p, n);
        if (sink) TRY_VOID(sink(o, p, n));
    }
    if (stored) *stored = total;
    return fp.finish(m.size);
}

// What a file's stored data must add up to: its size, or its sparse map's segments.
uint64_t expected_stored(const Member& m) {
    if (m.sparse.empty()) return m.size;
    uint64_t sum = 0;
    for (const auto& s : m.sparse) sum += s.second;
    return sum;
}

std::string fp_of_meta(const Member& m) {
    if (m.kind == Member::Kind::Symlink || m.kind == Member::Kind::Hardlink) return fingerprint_bytes(m.link_target);
    return fingerprint_bytes("");
}

}  // namespace

Patch::Patch() : impl_(new Impl) {}
Patch::Patch(Patch&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }
Patch& Patch::operator=(Patch&& o) noexcept {
    if (this != &o) {
        Patch old(std::move(*this));
        impl_ = o.impl_;
        o.impl_ = nullptr;
    }
    return *this;
}
Patch::~Patch() {
    if (!impl_) return;
    if (!impl_->temp.empty()) ::unlink(impl_->temp.c_str());
    delete impl_;
}

const Manifest& Patch::manifest() const { return impl_->manifest; }
const std::vector<Member>& Patch::members() const { return impl_->members; }
const std::string& Patch::file() const { return impl_->file; }
bool Patch::from_session() const { return impl_->from_session; }

namespace {

struct Parsed {
    Manifest manifest;
    std::vector<Member> members;
    Sums sums;
    std::vector<StoredData> stored;
    std::vector<ZstdReader::Mark> marks;
    std::string originals;        // .layover/originals whole (/2), or the .layover/original members back to back (/3)
    bool have_originals = false;  // a .layover/originals member (/2)
    std::vector<uint64_t> one_sizes;  // the size of each .layover/original member (/3), in order
};

// Originals (layover-patch/2): the member holds exactly the listed contents
// back to back; each must be the content its fingerprint names, and that
// fingerprint the base record of a modified file. Anything else is hostile
// or cut off, and the patch is refused.
// In layover-patch/3 each original is a .layover/original member of its
// own, in list order: the same checks over those members back to back, and
// each member holds exactly its listed original.
Result<void> check_originals(const Parsed& im, std::map<std::string, std::string>* out) {
    const auto& list = im.manifest.originals;
    bool v3 = im.manifest.format == "layover-patch/3";
    if (v3 ? im.have_originals : !im.one_sizes.empty())
        return base::error(std::string("a ") + im.manifest.format + " patch has a " +
                           (v3 ? kOriginalsName : kOriginalName) + " member; the patch was altered");
    if (v3) {
        if (im.one_sizes.size() < list.size())
            return base::error("the manifest lists " + lim(list.size()) + " originals but the patch has " +
                               lim(im.one_sizes.size()) + " " + kOriginalName + " members (cut off?)");
        if (im.one_sizes.size() > list.size())
            return base::error(std::string("the patch has more ") + kOriginalName +
                               " members than the manifest lists originals; the patch was altered");
        for (size_t i = 0; i < list.size(); i++)
            if (im.one_sizes[i] != list[i].size)
                return base::error("original #" + lim(i + 1) + " holds " + lim(im.one_sizes[i]) +
                                   " bytes, the manifest says " + lim(list[i].size) + "; the patch was altered");
    }
    if (list.empty() && !im.have_originals && im.one_sizes.empty()) return base::Ok();
    if (!v3 && !im.have_originals)
        return base::error("the manifest lists originals but the patch has no " + std::string(kOriginalsName) +
                           " member (cut off?)");
    std::set<std::string_view> modified;
    for (const auto& c : im.manifest.changes)
        if (c.kind == Kind::Modified && c.type == Type::File && c.old_type == Type::File) modified.insert(c.path);
    std::set<std::string_view> bases;
    for (const auto& b : im.manifest.base)
        if (!b.absent && b.type == Type::File && modified.count(b.path)) bases.insert(b.fingerprint);
    uint64_t at = 0;
    for (const auto& o : list) {
        if (o.size > im.originals.size() - at)
            return base::error(std::string(kOriginalsName) +
                               " is shorter than the originals the manifest lists (cut off)");
        std::string data = im.originals.substr(at, o.size);
        at += o.size;
        if (fingerprint_bytes(data) != o.fingerprint)
            return base::error("an original's content does not match its fingerprint " + shown(o.fingerprint) +
                               "; the patch was altered");
        if (!bases.count(o.fingerprint))
            return base::error("original " + shown(o.fingerprint) +
                               " matches no modified file's base record; the patch was altered");
        if (!out->emplace(o.fingerprint, std::move(data)).second)
            return base::error("original " + shown(o.fingerprint) + " is listed twice");
    }
    if (at != im.originals.size())
        return base::error(std::string(kOriginalsName) + " holds more than the originals the manifest lists");
    return base::Ok();
}

HeaderBudget budget_of(const Limits& l) {
    HeaderBudget b;
    b.max_pax_header = l.max_pax_header;
    b.max_sparse_segments = l.max_sparse_segments;
    return b;
}

// A GNU sparse 1.0 map is read with the headers but is not one: allow what
// its entries can take (two decimal int64 lines each, the count line, the
// padding, and a closing zero-length entry), so a file with
// max_sparse_segments segments reads, while a map padded with extra
// entries does not.
uint64_t sparse_map_allowance(archive_entry* e) {
    int count = archive_entry_sparse_count(e);
    if (count <= 0) return 0;
    return (static_cast<uint64_t>(count) + 2) * 2 * 21 + 512;
}

Result<void> validate(int fd, const Limits& l, Parsed* im) {
    TarIn t(fd, budget_of(l));
    TRY_VOID(t.open());
    Validator v(l);
    std::vector<std::pair<std::string, std::string>> computed;
    bool have_sums = false;
    // The manifest (first member) is parsed on a second thread while the
    // members after it are read and hashed; nothing needs it before the
    // agreement check at the end.
    std::string manifest_text;
    Result<Manifest> manifest = base::error("");
    bool parsing = false;
    base::StackThread parser;
    auto members = [&]() -> Result<void> {
        for (uint64_t index = 0;; index++) {
            uint64_t hb = 0;
            TRY(archive_entry * e, t.next(&hb));
            if (!e) return base::Ok();
            if (hb > l.max_pax_header + sparse_map_allowance(e))
                return base::error("member #" + lim(index) + " has " + lim(hb) +
                                   " bytes of headers, over the limit of " + lim(l.max_pax_header) +
                                   "; raise --max-pax-header if you trust it");
            if (index >= l.max_members + 2)
                return base::error("the patch has more than " + lim(l.max_members) +
                                   " members; raise --max-members if you trust it");
            if (have_sums) return base::error(std::string("a member follows ") + kSumsName + ", which must be last");
            const char* raw = archive_entry_pathname(e);
            std::string name = raw ? raw : "";
            bool regular = archive_entry_filetype(e) == AE_IFREG && !archive_entry_hardlink(e);
            if (index == 0) {
                if (name != kManifestName || !regular)
                    return base::error(std::string("not a layover patch: the first member is not ") + kManifestName);
                TRY(manifest_text, read_small(t, l.max_manifest, kManifestName, archive_entry_size(e)));
                // Every payload member is a change in the manifest, each well
                // over 128 bytes of it: room for them all without regrowing.
                im->members.reserve(std::min<uint64_t>(manifest_text.size() / 128, l.max_members) + 2);
                im->stored.reserve(im->members.capacity());
                v.reserve(im->members.capacity());
                computed.emplace_back(name, fingerprint_bytes(manifest_text));
                auto parse = [&] { manifest = manifest_from_text(manifest_text); };
                parsing = true;
                if (!parser.start(parse)) parse();
                continue;
            }
            if (name == kManifestName) return base::error(std::string("the patch has a second ") + kManifestName);
            if (name == kOriginalsName) {
                if (im->have_originals) return base::error(std::string("the patch has a second ") + kOriginalsName);
                if (!regular) return base::error(std::string(kOriginalsName) + " is not a regular file");
                TRY(im->originals, read_small(t, l.max_manifest, kOriginalsName, archive_entry_size(e)));
                computed.emplace_back(name, fingerprint_bytes(im->originals));
                im->have_originals = true;
                continue;
            }
            if (name == kOriginalName) {
                if (!regular) return base::error(std::string(kOriginalName) + " is not a regular file");
                uint64_t room = l.max_manifest - std::min<uint64_t>(l.max_manifest, im->originals.size());
                TRY(std::string one, read_small(t, room, kOriginalName, archive_entry_size(e)));
                computed.emplace_back(name, fingerprint_bytes(one));
                im->one_sizes.push_back(one.size());
                im->originals += one;
                continue;
            }
            if (name == kSumsName) {
                if (!regular) return base::error(std::string(kSumsName) + " is not a regular file");
                TRY(std::string text, read_small(t, l.max_manifest, kSumsName, archive_entry_size(e)));
                TRY(im->sums, sums_from_text(text));
                have_sums = true;
                continue;
            }
            std::string tar_name;
            TRY(Member m, v.member(e, &tar_name));
            std::string fp;
            StoredData where;
            if (m.kind == Member::Kind::File) {
                where.offset = t.position();
                TRY(fp, stream_data(t, m, &v, nullptr, &where.bytes));
                if (where.bytes != expected_stored(m))
                    return base::error("member " + shown(m.path) +
                                       ": its stored data does not match its size or sparse map");
            } else {
                fp = fp_of_meta(m);
            }
            where.sum = computed.size();
            computed.emplace_back(tar_name, fp);
            im->members.push_back(std::move(m));
            im->stored.push_back(where);
        }
    };
    auto r = members();
    parser.join();
    // A bad manifest comes first in the stream, so it is the error reported.
    if (parsing) {
        if (!manifest) return manifest.error();
        im->manifest = std::move(manifest.value());
    }
    if (!r) return r;
    if (!have_sums)
        return base::error(std::string("the patch is truncated or incomplete: no ") + kSumsName + " member");
    TRY_VOID(t.finish(1 << 20));
    im->marks = t.stream().marks();
    if (computed.size() != im->sums.size())
        return base::error(std::string(kSumsName) + " lists " + lim(im->sums.size()) + " members, the patch has " +
                           lim(computed.size()));
    for (size_t i = 0; i < computed.size(); i++) {
        if (computed[i].first != im->sums[i].first)
            return base::error(std::string(kSumsName) + " does not match member " +
                               base::display_path(computed[i].first));
        if (computed[i].second != im->sums[i].second)
            return base::error("fingerprint mismatch for member " + base::display_path(computed[i].first) +
                               ": the patch is corrupt or was altered");
    }
    std::string why = check_agreement(im->manifest, im->members, l);
    if (!why.empty()) return base::error(why);
    return base::Ok();
}

}  // namespace

const std::string* Patch::original(const std::string& fingerprint) const {
    auto it = impl_->original_by_fp.find(fingerprint);
    return it == impl_->original_by_fp.end() ? nullptr : &it->second;
}

namespace {}  // namespace

Result<Patch> Patch::open(const std::string& file, const Limits& limits) {
    Patch p;
    p.impl_->file = file;
    p.impl_->limits = limits;
    // O_NONBLOCK: a fifo given as the patch fails the check below instead
    // of hanging in open (reads of a regular file ignore the flag).
    auto fd = base::open_at(AT_FDCWD, file, O_RDONLY | O_NONBLOCK | O_NOCTTY);
    if (!fd && fd.error().code == ENOENT)
        return base::error("no patch file " + base::display_path(file) +
                           "; check the path (a patch is what 'layover save -o FILE' wrote)");
    if (!fd) return base::error("cannot open patch " + file + ": " + fd.error().message);
    struct stat st;
    if (::fstat(fd->get(), &st) != 0 || !S_ISREG(st.st_mode))
        return base::error("patch " + file + " is not a regular file");
    ::fcntl(fd->get(), F_SETFL, ::fcntl(fd->get(), F_GETFL) & ~O_NONBLOCK);
    p.impl_->fd = std::move(fd.value());
    Parsed parsed;
    auto r = validate(p.impl_->fd.get(), limits, &parsed);
    if (!r) return r.error().context("invalid patch " + file);
    if (auto o = check_originals(parsed, &p.impl_->original_by_fp); !o)
        return o.error().context("invalid patch " + file);
    p.impl_->manifest = std::move(parsed.manifest);
    p.impl_->members = std::move(parsed.members);
    p.impl_->sums = std::move(parsed.sums);
    p.impl_->stored = std::move(parsed.stored);
    p.impl_->marks = std::move(parsed.marks);
    return p;
}

}  // namespace capture
