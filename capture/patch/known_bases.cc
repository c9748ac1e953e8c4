#include "capture/patch/known_bases.h"

#include <algorithm>
#include <set>
#include <vector>

#include "capture/scan/entry/dir_print.h"
#include "helper/store/records/known_bases.h"

namespace capture {

base::Result<void> remember_bases(const std::string& session_dir, const Manifest& m) {
    session::KnownBases fresh;
    for (const auto& b : m.base)
        if (!b.absent && !b.stale && !b.fingerprint.empty() && (b.type == Type::File || b.type == Type::Symlink))
            fresh[b.path].insert(session::known_content(b.fingerprint, b.mode));
    // A real dir the patch deletes or replaces (capture/scan/entry/dir_print.h):
    // its subtree as the patch recorded it, whole, every entry in it fresh.
    std::set<std::string> whole;
    for (const auto& c : m.changes)
        if (c.kind == Kind::Deleted || c.kind == Kind::TypeChanged || c.kind == Kind::OpaqueDir) whole.insert(c.path);
    if (whole.empty()) return session::add_known_bases(session_dir, fresh);
    std::vector<const BaseEntry*> sorted;
    for (const auto& b : m.base)
        if (!b.absent) sorted.push_back(&b);
    std::sort(sorted.begin(), sorted.end(), [](const BaseEntry* a, const BaseEntry* b) { return a->path < b->path; });
    for (const BaseEntry* d : sorted) {
        if (d->stale || d->type != Type::Dir || !whole.count(d->path)) continue;
        std::string prefix = d->path + "/";
        auto it = std::lower_bound(sorted.begin(), sorted.end(), prefix,
                                   [](const BaseEntry* b, const std::string& p) { return b->path < p; });
        std::vector<SubtreeEntry> under;
        bool fresh_all = true;
        for (; it != sorted.end() && (*it)->path.compare(0, prefix.size(), prefix) == 0; ++it) {
            const BaseEntry& b = **it;
            if (b.stale || ((b.type == Type::File || b.type == Type::Symlink) && b.fingerprint.empty())) {
                fresh_all = false;
                break;
            }
            under.push_back({b.path.substr(prefix.size()), b.type, b.mode, b.size, b.fingerprint});
        }
        if (fresh_all) fresh[d->path].insert(subtree_fingerprint(d->mode, std::move(under)));  // its mode inside
    }
    return session::add_known_bases(session_dir, fresh);
}

}  // namespace capture
