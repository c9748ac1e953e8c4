#include "capture/patch/agreement.h"

#include <string_view>
#include <utility>

#include "capture/patch/path_map.h"
#include "capture/scan/entry/names.h"
#include "helper/base/text.h"

namespace capture {

namespace {

std::string at(const std::string& path) { return base::display_path(path) + ": "; }

bool member_matches(const Change& c, const Member& m, std::string* why) {
    using MK = Member::Kind;
    // Apply takes a metadata change's xattrs from the manifest, while a
    // reviewer sees the payload (diff, tar -tv): they must say the same.
    if (m.xattrs != c.xattrs) {
        *why = "xattrs differ between payload and manifest";
        return false;
    }
    switch (c.type) {
        case Type::File:
            if (m.kind != MK::File && m.kind != MK::Hardlink) break;
            if (m.kind == MK::File && m.size != c.size) {
                *why = "size " + std::to_string(m.size) + " in the payload, " + std::to_string(c.size) +
                       " in the manifest";
                return false;
            }
            if ((m.mode & 07777) != c.mode) {
                *why = "mode differs between payload and manifest";
                return false;
            }
            return true;
        case Type::Dir:
            if (m.kind != MK::Dir) break;
            if ((m.mode & 07777) != c.mode) {
                *why = "mode differs between payload and manifest";
                return false;
            }
            return true;
        case Type::Symlink:
            if (m.kind != MK::Symlink) break;
            if (m.link_target != c.link_target) {
                *why = "symlink target differs between payload and manifest";
                return false;
            }
            return true;
        case Type::Fifo:
            if (m.kind != MK::Fifo) break;
            return true;
        default: break;
    }
    *why = std::string("the manifest says ") + type_name(c.type) + " but the payload member is another type";
    return false;
}

}  // namespace

// Paths are looked up by view into the manifest (no copies, in flat maps), and each
// change's payload evidence is kept beside it rather than in sets of paths.
std::string check_agreement(const Manifest& m, const std::vector<Member>& members, const Limits& limits) {
    struct Seen {
        bool based = false, written = false, deleted = false, opaque = false;
    };
    PathMap changes(m.changes.size());  // path -> index in m.changes
    for (size_t i = 0; i < m.changes.size(); i++) {
        const Change& c = m.changes[i];
        std::string bad = check_relative_path(c.path, limits.max_name_len);
        if (!bad.empty()) return "manifest change " + at(c.path) + bad;
        bool fresh = false;
        changes.get(c.path, static_cast<uint32_t>(i), &fresh);
        if (!fresh) return "manifest lists " + at(c.path) + "more than once";
        if (c.captured && c.type == Type::Socket)
            return "manifest change " + at(c.path) + "a socket cannot be captured";
    }
    std::vector<Seen> seen(m.changes.size());
    PathMap other_base;  // base records of paths that are not changes
    for (const auto& b : m.base) {
        std::string bad = check_relative_path(b.path, limits.max_name_len);
        if (!bad.empty()) return "manifest base " + at(b.path) + bad;
        // Without it a same-size edit of the real file would go unnoticed.
        if (!b.absent && (b.type == Type::File || b.type == Type::Symlink) && b.fingerprint.empty())
            return "manifest base " + at(b.path) + "a file or symlink record without a fingerprint";
        const uint32_t* it = changes.find(b.path);
        bool fresh = true;
        if (it) fresh = !std::exchange(seen[*it].based, true);
        else other_base.get(b.path, 0, &fresh);
        if (!fresh) return "manifest base lists " + at(b.path) + "more than once";
    }
    // A hard link gets its target's inode: what the manifest lists for the
    // link (size, mode, xattrs) must be what that file member holds, or
    // show and the apply list would describe another file than apply writes.
    PathMap files(members.size());  // path -> index in members
    for (size_t mi = 0; mi < members.size(); mi++) {
        const Member& mem = members[mi];
        if (mem.kind == Member::Kind::File) files.get(mem.path, static_cast<uint32_t>(mi));
        const uint32_t* it = changes.find(mem.path);
        if (!it || !m.changes[*it].captured)
            return "payload member " + at(mem.path) + "is not a change in the manifest";
        const Change& c = m.changes[*it];
        Seen& s = seen[*it];
        std::string why;
        switch (mem.kind) {
            case Member::Kind::Whiteout:
                if (c.kind != Kind::Deleted) return "payload deletes " + at(mem.path) + "but the manifest does not";
                s.deleted = true;
                break;
            case Member::Kind::Opaque:
                if (c.kind != Kind::OpaqueDir)
                    return "payload marks " + at(mem.path) + "opaque but the manifest does not";
                s.opaque = true;
                break;
            default:
                if (c.kind == Kind::Deleted) return "payload writes " + at(mem.path) + "which the manifest deletes";
                if (!member_matches(c, mem, &why)) return "payload member " + at(mem.path) + why;
                if (mem.kind == Member::Kind::Hardlink) {
                    const uint32_t* ti = files.find(mem.link_target);
                    const Member* t = ti ? &members[*ti] : nullptr;
                    if (!t || t->size != c.size || (t->mode & 07777) != c.mode || t->xattrs != c.xattrs)
                        return "payload member " + at(mem.path) + "a hard link to " +
                               base::display_path(mem.link_target) +
                               ", whose size, mode or xattrs are not what the manifest lists for it";
                }
                s.written = true;
        }
    }
    for (size_t i = 0; i < m.changes.size(); i++) {
        const Change& c = m.changes[i];
        const Seen& s = seen[i];
        if (!c.captured) continue;
        if (!s.based) return "manifest has no base record for " + base::display_path(c.path);
        bool ok = c.kind == Kind::Deleted ? s.deleted : c.kind == Kind::OpaqueDir ? s.opaque && s.written : s.written;
        if (!ok) return "manifest change " + at(c.path) + "has no payload member";
    }
    return "";
}

}  // namespace capture
