// Crash recovery: after a SIGKILL (or power loss) the next apply or undo on
// the same target finds the journal and finishes the job before doing its
// own: an interrupted apply is reverted (or, if its undo record was already
// written, kept as complete); an interrupted undo is finished.
#pragma once
#include <string>

#include "helper/base/result.h"
#include "review/txn/fsops.h"
#include "review/txn/txn.h"

namespace review {

// Returns a one-line note of what was recovered ("" when nothing was pending).
base::Result<std::string> recover(const std::string& journal, int root, DirCache& dirs);

// Open (creating) TARGET/.layover-undo/ID and its trash dir.
struct Store {
    base::Fd undo_dir;  // TARGET/.layover-undo
    base::Fd dir;       // .../ID
    base::Fd trash;     // .../ID/trash
};
base::Result<Store> open_store(int root, const std::string& id, bool create);
// Remove the store of `id` and, when empty, .layover-undo itself.
base::Result<void> remove_store(int root, const std::string& id);

// Restore every unit (last first; for an undo with --force, later versions
// give way first), then drop staging and the store. Apply's rollback, undo
// and the recovery of either all take exactly these steps.
base::Result<void> revert_txn(int root, DirCache& dirs, const Txn& t, size_t committed);

}  // namespace review
