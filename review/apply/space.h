// Free space before staging: a patch whose new content cannot fit on the
// target's filesystem is refused before the first write, instead of filling
// the disk (every other program's writes failing meanwhile) and rolling back.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "review/apply/plan.h"

namespace review {

struct SpaceNeed {
    uint64_t bytes = 0;    // blocks staging writes (holes excluded), rounded up per entry
    uint64_t entries = 0;  // inodes staging creates (hard links take none)
};

// What staging the chosen items writes, with `block`-byte blocks: each staged
// file's stored data (a sparse file's segments; a partial apply's content),
// a block per dir, a symlink's target of 60 bytes or more, xattrs of 64 or more, and
// the copy of an in-place update's original kept for undo.
SpaceNeed space_needed(const std::vector<PlanItem>& items, uint64_t block);

// Empty when `need` fits into what is free (files_free: free inodes, or
// UINT64_MAX when the filesystem does not count them); else the one-line reason.
std::string space_problem(const SpaceNeed& need, uint64_t bytes_free, uint64_t files_free);

// statvfs of the target root (fd), then space_problem: an error to refuse the
// apply with before anything is written. A statvfs that fails is no refusal.
base::Result<void> check_free_space(int root, const std::vector<PlanItem>& items);

}  // namespace review
