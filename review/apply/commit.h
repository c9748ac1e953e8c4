// Commit (one unit at a time, each re-checked first) and restore (the
// inverse, used to roll back a failed apply, to revert an interrupted one
// from its journal, and by undo). Restore works from what it finds: it
// identifies entries by inode, so running it twice, or on a unit that was
// never committed, is harmless.
#pragma once
#include "helper/base/result.h"
#include "review/apply/plan.h"
#include "review/txn/fsops.h"

namespace review {

struct CommitCtx {
    int root;
    DirCache& dirs;
    int store_fd;
    int trash_fd;
    // The dirs staging wrote into, as this process opened them then (apply
    // only; null in a recovery): one moved out of the target, or swapped for
    // a symlink, since still holds its staged copy, removed through it.
    const DirCache* staged = nullptr;
    // An undo (or its recovery): a path it cannot reach is an error, never
    // passed over, so it is not said to be restored (see restore_unit).
    bool undoing = false;
};

base::Result<void> commit_unit(CommitCtx& ctx, PlanItem& it);

// After items[done] was committed: other links of its inode that this apply
// commits later saw their ctime (in place: their data) change by our own
// hand; take their current state as the baseline the re-check compares to.
void rebaseline_links(CommitCtx& ctx, std::vector<PlanItem>& items, size_t done);

// Bring unit.path back to what it was before the unit was committed.
base::Result<void> restore_unit(CommitCtx& ctx, const Unit& u);
// undo --force: whatever took the path's place since apply (a later edit)
// goes to the store's trash, so restore_unit can put the original back.
base::Result<void> make_way(CommitCtx& ctx, const Unit& u);

// Remove a unit's staged entry if one is left (never an original).
base::Result<void> discard_staged(CommitCtx& ctx, const Unit& u);

// The state a committed unit left, for undo's conflict check. walked: its
// staged tree's entries, walked before the commit (nullptr: walk it now).
base::Result<void> record_after(CommitCtx& ctx, Unit& u, const std::vector<EntryStat>* walked = nullptr);

// Undo's conflict check: "" when the unit's path is as apply left it.
std::string check_after(CommitCtx& ctx, const Unit& u);

}  // namespace review
