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

bool same_mode(uint32_t real, const capture::Member& m) { return (real & 07777) == (m.mode & 07777 & ~06000u); }

// A directory the patch adds whose real entry is a directory with its
// permission bits and, beneath it, exactly the patch's entries, each of its
// type and mode (a file of its size): worth reading the files and links of.
// Only files, dirs and symlinks without xattrs (newuser11: a patch that adds
// a dir, applied twice, had the dir and each file in it as conflicts).
bool dir_candidate(const PlanItem& it) {
    if (it.deletes || it.meta_only || !it.member || !it.before.exists) return false;
    const capture::Member& m = *it.member;
    if (m.kind != capture::Member::Kind::Dir || !m.xattrs.empty() || it.before.type != capture::Type::Dir ||
        !same_mode(it.before.mode, m) || it.before_tree.size() != it.tree.size())
        return false;
    std::map<std::string, const EntryStat*> real;
    for (const auto& e : it.before_tree) real[e.path] = &e;
    const std::string prefix = it.unit.path + "/";
    for (const capture::Member* t : it.tree) {
        if (t->path.compare(0, prefix.size(), prefix) != 0 || !t->xattrs.empty()) return false;
        auto r = real.find(t->path.substr(prefix.size()));
        if (r == real.end() || (t->kind != capture::Member::Kind::Symlink && !same_mode(r->second->mode, *t)))
            return false;
        const capture::Type type = r->second->type;
        bool ok = t->kind == capture::Member::Kind::File
                      ? type == capture::Type::File && r->second->size == t->size && t->size <= kMaxCompare
                  : t->kind == capture::Member::Kind::Dir     ? type == capture::Type::Dir
                  : t->kind == capture::Member::Kind::Symlink ? type == capture::Type::Symlink
                                                              : false;
        if (!ok) return false;
    }
    return true;
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
    std::map<PlanItem*, std::vector<const capture::Member*>> dirs;  // each new dir's files and links, to read
    for (auto& it : items) {
        if (it.conflicts.empty() || it.hard || opts.hunks.count(it.unit.path) || links.count(it.unit.path)) continue;
        if (dir_candidate(it)) {
            auto& under = dirs[&it];
            for (const capture::Member* t : it.tree)
                if (t->kind != capture::Member::Kind::Dir) under.push_back(t);
            for (const capture::Member* t : under)
                if (t->kind == capture::Member::Kind::File) files[t->path] = &it;
            continue;
        }
        if (!candidate(it)) continue;
        if (it.deletes) same.push_back(&it);
        else if (it.member->kind == capture::Member::Kind::File) files[it.unit.path] = &it;
        else if (auto real = read_real_side(root, it.unit.path, kMaxCompare);
                 real.ok() && real->exists && real->mode == kGitSymlink && real->data == it.member->link_target)
            same.push_back(&it);
    }
    std::map<std::string, std::string> fresh;
    if (!files.empty()) {
        TRY(auto read, read_new_contents(patch, files));
        fresh = std::move(read);
        for (auto& [path, it] : files) {
            if (dirs.count(it)) continue;  // a file in a new dir: its dir's check below
            auto real = read_real_side(root, path, kMaxCompare);
            if (real.ok() && real->exists && real->loaded && real->mode != kGitSymlink && real->data == fresh[path])
                same.push_back(it);
        }
    }
    for (auto& [it, under] : dirs) {
        bool all = true;
        for (const capture::Member* t : under) {
            auto real = read_real_side(root, t->path, kMaxCompare);
            std::string want = t->kind == capture::Member::Kind::Symlink ? t->link_target : fresh[t->path];
            if (t->kind == capture::Member::Kind::File) want.resize(t->size, '\0');  // a trailing hole
            bool link = t->kind == capture::Member::Kind::Symlink;
            if (!real.ok() || !real->exists || !real->loaded || (real->mode == kGitSymlink) != link ||
                real->data != want) {
                all = false;
                break;
            }
        }
        if (all) same.push_back(it);
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
