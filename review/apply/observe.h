// Compare the real target with the patch's base records (the conflict check),
// and re-check just before commit that nothing moved since.
#pragma once
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/conflict.h"
#include "review/apply/plan.h"
#include "review/txn/fsops.h"

namespace review {

// Fill each item's before/before_tree/conflicts. Errors only for I/O
// failures; unsafe layouts (a symlinked or missing parent) become hard
// conflicts, which --force does not override.
// With `defer`, large files whose content must be hashed are opened but not
// read: their jobs are returned, to be hashed while staging runs (the
// dominant cost of applying one big file is reading it twice otherwise).
base::Result<void> observe(int root, DirCache& dirs, const capture::Manifest& man, std::vector<PlanItem>& items,
                           std::vector<struct DeferredHash>* defer = nullptr);

// One postponed content comparison: the real file at real.path, open as fd.
struct DeferredHash {
    base::Fd fd;
    const capture::BaseEntry* base = nullptr;
    Observed real;
    base::Result<void> result = base::Ok();
};
inline constexpr uint64_t kDeferHashBytes = 8ull << 20;

// Hash every job (safe to run in another thread: touches only the jobs).
void hash_deferred(std::vector<DeferredHash>& jobs);
// Compare the hashed jobs with their base records; conflicts go to their
// items. Returns the first hashing error.
base::Result<void> finish_deferred(std::vector<DeferredHash>& jobs, std::vector<PlanItem>& items);

// Every entry beneath directory `rel` (paths relative to it), sorted.
base::Result<std::vector<EntryStat>> walk_tree(int root, const std::string& rel);

// "" when `now` is what `then` recorded (type, inode, mode, size, mtime,
// ctime); otherwise a reason.
std::string same_entry(const EntryStat& then, const EntryStat& now);
// Same for whole subtrees (as walk_tree returns them).
std::string same_tree(const std::vector<EntryStat>& then, const std::vector<EntryStat>& now);

}  // namespace review
