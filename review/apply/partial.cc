#include "review/apply/partial.h"

#include <algorithm>
#include <map>

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/text.h"
#include "helper/store/records/known_bases.h"
#include "review/diff/format.h"
#include "review/diff/source.h"

namespace review {

namespace {

constexpr uint64_t kMaxText = 64ull << 20;  // as `layover diff` loads: bigger is shown as binary

base::Error not_hunkable(const std::string& path, const std::string& why) {
    return base::error("--hunks " + base::display_path(path) + ": " + why +
                       "; hunks apply to modified text files only (apply it whole, or leave it out with "
                       "--exclude); nothing was applied");
}

// A file the patch also adds under another name (a hard link to it) gets one
// content for both: its hunks cannot be chosen apart.
base::Error linked(const std::string& path, const std::string& other) {
    return base::error("--hunks " + base::display_path(path) + ": " + base::display_path(other) +
                       " is a hard link to it in the patch and would get the same content; apply " +
                       base::display_path(path) + " whole, or leave " + base::display_path(other) +
                       " out (--exclude); nothing was applied");
}

}  // namespace

std::map<std::string, std::string> hard_linked_names(const std::vector<PlanItem>& items) {
    std::map<std::string, std::string> out;
    auto add = [&](const capture::Member* m) {
        if (m && m->kind == capture::Member::Kind::Hardlink) out.emplace(m->link_target, m->path);
    };
    for (const auto& it : items) {
        add(it.member);
        for (const capture::Member* m : it.tree) add(m);
    }
    return out;
}

base::Result<std::map<std::string, std::string>> read_new_contents(const capture::Patch& patch,
                                                                   const std::map<std::string, PlanItem*>& items) {
    std::map<std::string, std::string> out;
    TRY_VOID(patch.read_data([&](const capture::Member& m) -> capture::DataSink {
        if (!items.count(m.path)) return nullptr;
        std::string* buf = &out[m.path];
        return [buf](uint64_t offset, const char* data, size_t len) -> base::Result<void> {
            if (offset > buf->size()) buf->resize(offset, '\0');
            buf->replace(offset, std::min<uint64_t>(len, buf->size() - offset), data, len);
            return base::Ok();
        };
    }));
    for (const auto& [path, it] : items)
        if (it->member && out[path].size() < it->member->size) out[path].resize(it->member->size, '\0');
    return out;
}

// Said with a hunk choice's conflict: the fix line's --force would not do
// (the reviewer of a patch from elsewhere, who edited the file since, was
// sent to --force, which refused it again).
constexpr const char* kNoHunkFit =
    "; its hunks were chosen, and a file taken by hunk must be as the patch's base was (hunks are never "
    "fitted by guessing; --force does not override this): take the file whole, or leave it out";

void hunk_conflicts_are_hard(const HunkChoices& choices, std::vector<PlanItem>& items) {
    for (auto& it : items) {
        if (it.conflicts.empty() || it.hard || !choices.count(it.unit.path)) continue;
        it.hard = true;
        for (auto& c : it.conflicts) c.reason += kNoHunkFit;
    }
}

base::Result<void> choose_partial(int root, const capture::Patch& patch, const HunkChoices& choices,
                                  std::vector<PlanItem>& items, std::vector<PartialFile>* partial) {
    if (choices.empty()) return base::Ok();
    std::map<std::string, PlanItem*> chosen;
    for (auto& it : items)
        if (choices.count(it.unit.path)) chosen[it.unit.path] = &it;
    for (const auto& [path, c] : choices) {
        auto f = chosen.find(path);
        if (f == chosen.end())
            return base::error("--hunks " + base::display_path(path) +
                               ": not among the changes being applied (see 'layover diff --hunk-numbers'; "
                               "--only/--exclude may have left it out); nothing was applied");
        const PlanItem& it = *f->second;
        const capture::Change& ch = *it.change;
        if (ch.kind != capture::Kind::Modified || ch.type != capture::Type::File || ch.old_type != capture::Type::File)
            return not_hunkable(path, std::string("a change of kind ") + capture::kind_name(ch.kind));
        if (!it.member || it.member->kind != capture::Member::Kind::File)
            return not_hunkable(path, "its new content is a hard link");
        if (it.member->size > kMaxText) return not_hunkable(path, "too large to diff");
    }
    TRY(auto fresh, read_new_contents(patch, chosen));
    std::map<std::string, const capture::BaseEntry*> bases;
    for (const auto& b : patch.manifest().base)
        if (chosen.count(b.path)) bases[b.path] = &b;
    std::vector<std::string> dropped;
    const auto links = hard_linked_names(items);
    for (auto& [path, item] : chosen) {
        if (!item->conflicts.empty()) {
            item->hard = true;  // no fuzzy fit: hunks of a file that moved are a conflict --force cannot override
            for (auto& c : item->conflicts) c.reason += kNoHunkFit;
            continue;
        }
        // A moved file merged by merge_moved: its hunks are the merge's.
        const std::string& now = item->hunks_of_merge ? *item->content : fresh[path];
        TRY(Side real, read_real_side(root, path, kMaxText));
        if (!real.exists || real.mode == kGitSymlink) continue;  // observe reported it as a conflict
        if (!real.loaded) return not_hunkable(path, "the real file is too large to diff");
        if (looks_binary(real.data) || looks_binary(now)) return not_hunkable(path, "it is binary");
        PartialFile pf;
        pf.path = path;
        pf.before_fp = capture::fingerprint_bytes(real.data);
        pf.before_mode = real.perm & 07777;
        pf.after_mode = item->member->mode & 07777;  // the apply writes the session's mode with it
        auto b = bases.find(path);
        if (!item->hunks_of_merge && b != bases.end() && !b->second->fingerprint.empty() &&
            b->second->fingerprint != pf.before_fp) {
            // No fuzzy fit: a hunk choice on a moved file is a conflict --force cannot override.
            if (item->conflicts.empty())
                item->conflicts.push_back({path, std::string("content changed on the target") + kNoHunkFit});
            item->hard = true;
            continue;
        }
        const HunkChoice& c = choices.at(path);
        pf.of = count_hunks(real.data, now);
        std::shared_ptr<const std::string> content = c.content;
        if (content) {  // chosen by apply -p (split or edited): against the real content it saw
            if (c.against != pf.before_fp) {
                item->conflicts.push_back({path, "the real file changed while its hunks were being chosen"});
                item->hard = true;
                continue;
            }
            pf.hunks = c.take;
            if (*content == now) continue;
            if (auto l = links.find(path); l != links.end()) return linked(path, l->second);
            if (*content == real.data) {
                dropped.push_back(path);
                continue;
            }
        } else {
            TRY(std::vector<bool> take, choose_hunks(path, c, pf.of));
            for (size_t i = 0; i < take.size(); i++)
                if (take[i]) pf.hunks.push_back(i + 1);
            if (pf.hunks.size() == pf.of) continue;  // every hunk: the file whole
            if (auto l = links.find(path); l != links.end()) return linked(path, l->second);
            if (pf.hunks.empty()) {
                dropped.push_back(path);
                continue;
            }
            content = std::make_shared<const std::string>(apply_hunks(real.data, now, take));
        }
        pf.after_fp = capture::fingerprint_bytes(*content);
        item->content = std::move(content);
        partial->push_back(std::move(pf));
    }
    if (!dropped.empty()) {
        std::vector<PlanItem> kept;
        for (auto& it : items)
            if (std::find(dropped.begin(), dropped.end(), it.unit.path) == dropped.end()) kept.push_back(std::move(it));
        items = std::move(kept);
    }
    return base::Ok();
}

std::vector<std::string> remember_partial(const std::string& session_dir, const std::vector<PartialFile>& partial) {
    std::vector<std::string> warnings;
    for (const auto& p : partial)
        if (auto r = session::add_known_bases(
                session_dir, p.path, session::partial_known(p.before_fp, p.before_mode, p.after_fp, p.after_mode));
            !r.ok())
            warnings.push_back("applied, but " + r.error().message + "; the rest of " + base::display_path(p.path) +
                               " may show as a conflict");
    return warnings;
}

}  // namespace review
