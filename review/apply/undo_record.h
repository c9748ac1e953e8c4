// Undo patches: `apply --undo-to FILE` exports an apply's undo record as an
// ordinary layover patch (manifest "kind": "undo"), built from the originals
// apply moved into the undo store and the attributes the record kept.
// Applied to the tree as apply left it, it restores the tree as it was; its
// base records describe the after-apply state, so a later edit is a conflict.
// `layover undo FILE` applies it and then retires the store it came from.
#pragma once
#include <string>

#include "capture/patch/reader.h"
#include "capture/scan/entry/change.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "review/txn/txn.h"

namespace review {

// FILE's temp name beside it, created (0600, O_EXCL) before apply touches
// the tree, so a bad FILE fails early; written and renamed into place after
// the apply. Removed if never written.
class UndoPatchOut {
public:
    static base::Result<UndoPatchOut> create(const std::string& file);
    UndoPatchOut(UndoPatchOut&& o) noexcept
        : file_(std::move(o.file_)), tmp_(std::move(o.tmp_)), fd_(std::move(o.fd_)) {}
    UndoPatchOut& operator=(UndoPatchOut&&) = delete;
    ~UndoPatchOut();

    // Build and write the undo patch of the finished apply `txn` (the target
    // at `root`, its store at `store_fd`), then rename it into place.
    base::Result<void> write(int root, int store_fd, const Txn& txn);

private:
    UndoPatchOut() = default;
    std::string file_, tmp_;
    base::Fd fd_;
};

// Pure: the change an undo patch makes for one unit, from the op apply did
// and the types before (orig) and after it (None = absent).
capture::Kind undo_kind(Op op, capture::Type orig, capture::Type after);

// Pure: walk order (parents first, siblings bytewise), as capture writes it.
bool walk_less(const std::string& a, const std::string& b);

// After `layover undo PATCH` succeeded: remove the undo store the patch was
// exported from when it is this tree's (its record names this root's device
// and inode, and every path it lists is a change of the patch); the tree is
// back as it was, so that record is spent. Returns the store's path, or ""
// when there was none.
base::Result<std::string> retire_exported_store(int root, const std::string& state, uint64_t dev, uint64_t ino,
                                                const capture::Patch& patch);

// Does this tree hold the undo store (and its record) the undo patch was
// exported from, as retire_exported_store checks? Only then does layover
// vouch for the patch: any other undo patch may come from anywhere.
base::Result<bool> undo_patch_vouched(int root, const std::string& state, uint64_t dev, uint64_t ino,
                                      const capture::Patch& patch);

}  // namespace review
