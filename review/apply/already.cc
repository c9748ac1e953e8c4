#include "review/apply/already.h"

#include <algorithm>
#include <map>

#include "review/apply/partial.h"
#include "review/diff/format.h"
#include "review/diff/source.h"

namespace review {

namespace {

constexpr uint64_t kMaxCompare = 64ull << 20;

// A file or symlink the patch writes whole, whose real entry has its type,
// size and permission bits (set-id bits are never applied): worth reading.
bool candidate(const PlanItem& it) {
    if (it.deletes) return !it.before.exists;
    if (it.meta_only || !it.member || !it.before.exists) return false;
    const capture::Member& m = *it.member;
    if (m.kind == capture::Member::Kind::Symlink) return it.before.type == capture::Type::Symlink;
    if (m.kind != capture::Member::Kind::File || !m.xattrs.empty() || m.size > kMaxCompare) return false;
    return it.before.type == capture::Type::File && it.before.size == m.size &&
           (it.before.mode & 07777) == (m.mode & 07777 & ~06000u);
}

}  // namespace

base::Result<void> drop_already_applied(int root, const capture::Patch& patch, const ApplyOptions& opts,
                                        std::vector<PlanItem>& items, std::vector<std::string>* already) {
    // Nothing to look at on the common path (no conflict): no walk of the links.
    if (opts.as_undo ||
        std::none_of(items.begin(), items.end(), [](const PlanItem& it) { return !it.conflicts.empty(); }))
        return base::Ok();
    const auto links = hard_linked_names(items);
    std::map<std::string, PlanItem*> files;
    std::vector<PlanItem*> same;
    for (auto& it : items) {
        if (it.conflicts.empty() || it.hard || opts.hunks.count(it.unit.path) || links.count(it.unit.path) ||
            !candidate(it))
            continue;
        if (it.deletes) same.push_back(&it);
        else if (it.member->kind == capture::Member::Kind::File) files[it.unit.path] = &it;
        else if (auto real = read_real_side(root, it.unit.path, kMaxCompare);
                 real.ok() && real->exists && real->mode == kGitSymlink && real->data == it.member->link_target)
            same.push_back(&it);
    }
    if (!files.empty()) {
        TRY(auto fresh, read_new_contents(patch, files));
        for (auto& [path, it] : files) {
            auto real = read_real_side(root, path, kMaxCompare);
            if (real.ok() && real->exists && real->loaded && real->mode != kGitSymlink && real->data == fresh[path])
                same.push_back(it);
        }
    }
    if (same.empty()) return base::Ok();
    for (PlanItem* it : same) {
        already->push_back(it->unit.path);
        it->unit.path.clear();  // marked: dropped below
    }
    std::erase_if(items, [](const PlanItem& it) { return it.unit.path.empty(); });
    std::sort(already->begin(), already->end());
    return base::Ok();
}

}  // namespace review
