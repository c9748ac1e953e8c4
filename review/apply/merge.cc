#include "review/apply/merge.h"

#include <algorithm>
#include <cerrno>
#include <map>
#include <set>

#include "helper/base/text.h"
#include "review/apply/partial.h"
#include "review/diff/format.h"
#include "review/diff/source.h"

namespace review {

namespace {

std::string ranges_reason(const std::vector<MergeConflict>& cs) {
    std::string out = "changed on both sides since the base, overlapping at";
    for (size_t i = 0; i < cs.size() && i < 5; i++)
        out += std::string(i ? "," : "") + " lines " + range_text(cs[i].ours) + " (patch: " + range_text(cs[i].theirs) +
               ")";
    if (cs.size() > 5) out += ", ...";
    return out + "; nothing merged (--conflict=markers writes conflict markers)";
}

}  // namespace

base::Result<void> merge_moved(int root, const capture::Patch& patch, const ApplyOptions& opts,
                               std::vector<PlanItem>& items, ApplyReport* rep) {
    std::map<std::string, const capture::BaseEntry*> bases;
    for (const auto& b : patch.manifest().base) bases[b.path] = &b;
    std::map<std::string, PlanItem*> todo;
    // A file the patch also adds under another name stays a conflict: the
    // merge would reach that name too, unlike what show and diff list.
    const auto links = hard_linked_names(items);
    // The merges held together stay within kMaxMergeTotal, counted as diff
    // counts them (review/diff/source.cc): every file with an original, in
    // path order, whether it moved or not.
    std::map<std::string, PlanItem*> candidates;
    for (auto& it : items) {
        auto b = bases.find(it.unit.path);
        if (it.member && it.member->kind == capture::Member::Kind::File && b != bases.end() && !b->second->stale &&
            b->second->type == capture::Type::File && patch.original(b->second->fingerprint) &&
            it.before.type == capture::Type::File && it.before.size <= kMaxMerge && it.member->size <= kMaxMerge)
            candidates[it.unit.path] = &it;
    }
    std::set<const PlanItem*> over;
    MergeBudget budget;
    for (const auto& [path, it] : candidates)
        if (!budget.take(it->before.size, it->member->size)) over.insert(it);
    for (auto& it : items) {
        if (it.conflicts.empty() || it.hard || links.count(it.unit.path)) continue;
        const capture::Change& c = *it.change;
        if (c.kind != capture::Kind::Modified || c.type != capture::Type::File || c.old_type != capture::Type::File)
            continue;
        if (!it.member || it.member->kind != capture::Member::Kind::File || it.member->size > kMaxMerge) continue;
        auto b = bases.find(it.unit.path);
        // A stale base has no original to show: the real file moved before it was recorded.
        if (b == bases.end() || b->second->stale || !patch.original(b->second->fingerprint)) continue;
        if (it.before.type != capture::Type::File || (it.before.mode & 07777) != (b->second->mode & 07777)) continue;
        if (over.count(&it)) {
            it.conflicts.assign(
                1, Conflict{it.unit.path, "changed on both sides since the base; " + over_merge_budget(it.unit.path)});
            continue;
        }
        todo[it.unit.path] = &it;
    }
    if (todo.empty()) return base::Ok();
    TRY(auto fresh, read_new_contents(patch, todo));
    for (auto& [path, it] : todo) {
        const std::string& theirs = fresh[path];
        auto read = read_real_side(root, path, kMaxMerge);
        if (!read.ok() && read.error().code == EACCES) continue;  // unreadable (mode 0000): stays a conflict
        TRY(Side real, std::move(read));
        if (!real.exists || real.mode == kGitSymlink || !real.loaded) continue;
        const std::string& orig = *patch.original(bases[path]->fingerprint);
        if (looks_binary(real.data) || looks_binary(theirs)) continue;
        // Chosen by hunk: the hunks are the clean merge's (diff and apply -p
        // show those); one that overlaps stays a conflict, never marked.
        bool by_hunk = opts.hunks.count(path) > 0;
        MergeResult m = merge3(orig, real.data, theirs, opts.conflict_markers && !by_hunk, {"target", "patch"});
        if (by_hunk) {
            if (!m.conflicts.empty()) continue;
            it->conflicts.clear();
            it->hunks_of_merge = true;
            it->content = std::make_shared<const std::string>(std::move(m.text));
            rep->merged.push_back(path);
            continue;
        }
        if (!m.conflicts.empty()) {
            rep->merge_conflicts.push_back({path, m.conflicts});
            if (!opts.conflict_markers) {
                it->conflicts.assign(1, Conflict{path, ranges_reason(m.conflicts)});
                continue;
            }
            rep->marked.push_back(path);
        }
        it->conflicts.clear();
        // The real file has the patch's changes already (and its mode): nothing to write.
        if (m.conflicts.empty() && m.text == real.data && it->member->xattrs.empty() &&
            (it->member->mode & 07777 & ~06000u) == (it->before.mode & 07777)) {
            rep->already.push_back(path);
            it->unit.path.clear();  // dropped below: nothing to write
            continue;
        }
        it->content = std::make_shared<const std::string>(std::move(m.text));
        rep->merged.push_back(path);
    }
    std::erase_if(items, [](const PlanItem& it) { return it.unit.path.empty(); });
    std::sort(rep->already.begin(), rep->already.end());
    return base::Ok();
}

}  // namespace review
