// Staging: build every new entry under a hidden temp name beside its
// destination (files created 0600 with O_EXCL; new directory trees complete
// inside their staged directory), and save what commit will overwrite in
// place (hard-linked files: a copy in the undo store; metadata: the old
// attributes). Nothing is visible under a real name until commit.
#pragma once
#include <functional>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/plan.h"
#include "review/apply/progress.h"
#include "review/txn/durable.h"
#include "review/txn/fsops.h"

namespace review {

struct StageCtx {
    int root;
    DirCache& dirs;
    int store_fd;
    const capture::Patch& patch;
    Progress& progress;
    Durability& dur;        // records what must be fsynced before commit
    std::string store_rel;  // the undo store, relative to the root ("" when in the state dir)
    // ApplyOptions::tap: sees every file member's data as it streams by.
    const std::function<capture::DataSink(const capture::Member&)>* tap = nullptr;
};

// Requires unit.op/tmp/slot set. Fills unit.new_ino and the old_* fields.
base::Result<void> stage_all(StageCtx& ctx, std::vector<PlanItem>& items);

// Final name of a staged relative path: split into the directory fd (opened
// beneath the root) and the last component.
base::Result<std::pair<int, std::string>> at_beneath(DirCache& dirs, const std::string& rel);

}  // namespace review
