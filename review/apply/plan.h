// From a validated patch to a list of apply units: one per changed path that
// is committed by its own rename; children of directories the patch creates
// (added, opaque or type-changed to dir) are staged inside that directory and
// committed with it. Pure apart from reading the patch's in-memory manifest.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/glob.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"
#include "review/txn/txn.h"

namespace review {

using base::PathFilter;

struct PlanItem {
    Unit unit;  // path; op, tmp, slot filled later
    const capture::Change* change = nullptr;
    const capture::Member* member = nullptr;   // new content root; null for deletions and metadata
    std::vector<const capture::Member*> tree;  // members strictly beneath a new dir, sorted by path
    bool deletes = false;                      // the change removes the path
    bool meta_only = false;                    // mode/xattrs changed in place
    // Filled by observe():
    EntryStat before;
    uint64_t before_nlink = 0;
    std::vector<EntryStat> before_tree;  // entries beneath a directory that is moved aside
    std::vector<Conflict> conflicts;
    bool hard = false;  // a conflict --force cannot override
    // apply --hunks: the content staged instead of the member's data (the
    // real file with only the chosen hunks applied; review/apply/partial.h).
    std::shared_ptr<const std::string> content;
    // merge_moved: a file chosen by hunk that moved on since the patch's base
    // and merges cleanly; `content` holds the merge, and its hunks (against
    // the real file) are the ones chosen, as `diff` and `apply -p` show them.
    bool hunks_of_merge = false;
    // Filled by staging for a new directory tree: every entry beneath it as
    // staging left it (walk_tree's order and fields), from the stat of each
    // entry's own fd as it was finished. Unset when staging could not vouch
    // for it (hard links, a dir the owner may not list): then the tree is walked.
    std::optional<std::vector<EntryStat>> staged_tree;
};

struct Plan {
    std::vector<PlanItem> items;       // commit order: by path, in-place metadata of dirs last
    std::vector<std::string> skipped;  // changes that cannot be applied (sockets)
};

// Validates again what apply relies on (safe names, no reserved names, no
// writes beneath a deleted path, hardlinks to staged members, applicable
// types) and selects with the filter.
base::Result<Plan> make_plan(const capture::Patch& patch, const PathFilter& filter);

// Staged location of member path `p` inside item `it` (whose tmp is set).
std::string staged_path(const PlanItem& it, const std::string& p);

}  // namespace review
