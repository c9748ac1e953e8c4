#include "review/apply/undo_vouch.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <set>

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fs/beneath.h"
#include "review/txn/fsops.h"

namespace review {

namespace {

using capture::Change;
using capture::Member;
using capture::Type;

bool same_bits(uint32_t a, uint32_t b) { return (a & 0777) == (b & 0777); }

// A file member's content fingerprint (a hard link's: its target's).
const std::string* content_of(const capture::Patch& patch, const std::map<std::string, size_t>& index,
                              const std::string& path) {
    auto m = index.find(path);
    if (m == index.end()) return nullptr;
    const Member& mem = patch.members()[m->second];
    if (mem.kind == Member::Kind::Hardlink) {
        m = index.find(mem.link_target);
        if (m == index.end() || patch.members()[m->second].kind != Member::Kind::File) return nullptr;
    } else if (mem.kind != Member::Kind::File) {
        return nullptr;
    }
    return &patch.member_fingerprint(m->second);
}

// The original the store keeps at `rel` (a slot, or an entry beneath one) is what change c writes.
bool matches_original(int store_dir, const std::string& rel, const Change& c, bool check_mode,
                      const std::string* content) {
    auto kept = open_beneath(store_dir, rel, O_PATH | O_NOFOLLOW);
    struct stat st {};
    if (!kept.ok() || ::fstat(kept->get(), &st) != 0) return false;
    if (type_of_mode(st.st_mode) != c.type) return false;
    if (check_mode && c.type != Type::Symlink && !same_bits(c.mode, st.st_mode)) return false;
    if (c.type == Type::Symlink) {
        std::string target(static_cast<size_t>(st.st_size) + 1, '\0');
        ssize_t n = ::readlinkat(kept->get(), "", target.data(), target.size());
        return n >= 0 && static_cast<size_t>(n) == c.link_target.size() &&
               target.compare(0, static_cast<size_t>(n), c.link_target) == 0;
    }
    if (c.type != Type::File) return true;
    if (!content) return false;
    auto fd = open_beneath(store_dir, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!fd.ok()) return false;
    auto fp = capture::fingerprint_fd(fd->get(), static_cast<uint64_t>(st.st_size));
    return fp.ok() && fp.value() == *content;
}

}  // namespace

bool undo_patch_within_record(int store_dir, const Txn& t, const capture::Patch& patch) {
    const auto& changes = patch.manifest().changes;
    std::set<std::string> changed;
    std::map<std::string, const Unit*> units;
    for (const auto& c : changes) changed.insert(c.path);
    for (const auto& u : t.units) {
        if (!changed.count(u.path)) return false;
        units[u.path] = &u;
    }
    std::map<std::string, size_t> index;
    for (size_t i = 0; i < patch.members().size(); i++) index[patch.members()[i].path] = i;
    for (const auto& c : changes) {
        std::string p = c.path;
        auto u = units.find(p);
        while (u == units.end()) {
            size_t slash = p.rfind('/');
            if (slash == std::string::npos) return false;
            p.resize(slash);
            u = units.find(p);
        }
        const Unit& unit = *u->second;
        bool own = p == c.path;
        const std::string* content = content_of(patch, index, c.path);
        if (c.kind == capture::Kind::Deleted) {
            if (!own || unit.op != Op::Add) return false;  // undo takes away only what apply added
            continue;
        }
        switch (unit.op) {
            case Op::Add: return false;
            case Op::Meta:
                if (!own || !same_bits(c.mode, unit.old_mode) || c.xattrs != unit.old_xattrs) return false;
                break;
            case Op::InPlace:  // the slot holds a copy of the content; the record, its attributes
                if (!own || c.type != Type::File || !same_bits(c.mode, unit.old_mode) || unit.slot.empty() ||
                    !matches_original(store_dir, unit.slot, c, false, content))
                    return false;
                break;
            case Op::Replace:
            case Op::Delete:  // the slot holds the original itself
                if (unit.slot.empty() ||
                    !matches_original(store_dir, unit.slot + c.path.substr(p.size()), c, true, content))
                    return false;
                break;
        }
    }
    return true;
}

}  // namespace review
