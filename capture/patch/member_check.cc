#include "capture/patch/member_check.h"

#include "capture/scan/entry/names.h"
#include "capture/scan/entry/xattr.h"
#include "helper/base/text.h"

namespace capture::member_check {

std::string shown(const std::string& name) {
    std::string d = base::display_path(name);
    return d.size() > 200 ? d.substr(0, 200) + "..." : d;
}

namespace {

const char* member_kind_word(Member::Kind k) {
    switch (k) {
        case Member::Kind::Dir: return "directory";
        case Member::Kind::Symlink: return "symlink";
        case Member::Kind::Hardlink: return "hardlink";
        case Member::Kind::Fifo: return "fifo";
        default: return "special";
    }
}

}  // namespace

const char* Validator::leaf_word(uint32_t v) {
    auto k = static_cast<Member::Kind>(((v & kLeafMask) >> kLeafShift) - 1);
    return k == Member::Kind::File ? "file" : member_kind_word(k);
}

template <class Where>
Result<void> Validator::place(const Member& m, const Where& where) {
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
Result<void> Validator::attrs(archive_entry* e, Member* m, const Where& where) {
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

Result<Member> Validator::member(archive_entry* e, std::string* tar_name) {
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

}  // namespace capture::member_check
