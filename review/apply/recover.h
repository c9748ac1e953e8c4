// Crash recovery: after a SIGKILL (or power loss) the next apply or undo on
// the same target finds the journal and finishes the job before doing its
// own: an interrupted apply is reverted (or, if its undo record was already
// written, kept as complete); an interrupted undo is finished.
#pragma once
#include <string>

#include "helper/base/result.h"
#include "review/txn/durable.h"
#include "review/txn/fsops.h"
#include "review/txn/txn.h"

namespace review {

// Returns a one-line note of what was recovered ("" when nothing was pending).
// `state`: the state dir (where a store kept outside the target lives).
base::Result<std::string> recover(const std::string& journal, const std::string& state, int root, DirCache& dirs);
// Whether journal `t` is of the tree open at `root`: its birth time, when
// both know one, is the one the journal recorded. A tree removed and made
// again may reuse the inode the journal is keyed by; recover() then sets
// the journal aside (`JOURNAL.other-tree-ID`) and says so, doing nothing.
bool journal_is_of(const Txn& t, int root);

// Where an apply's undo store lives. In the state dir (STATE/undo/DEV-INO/ID)
// when it is on the target's mount, so originals still move by rename and
// nothing of layover's stays in the user's tree; else TARGET/.layover-undo/ID,
// which then holds a `.gitignore` of `*` and a CACHEDIR.TAG.
struct StoreRef {
    int root = -1;     // the target
    std::string home;  // absolute STATE/undo/DEV-INO, or "" for TARGET/.layover-undo
    std::string id;
};
StoreRef store_ref(int root, const std::string& state, const Txn& t);
// The store's absolute path, for messages and `undo`.
std::string store_path(const std::string& state, const Txn& t);
// True when a new store for the target at `root` belongs in the state dir:
// the same mount (rename works between them), and neither inside the other.
bool store_in_state(int root, const std::string& target, const std::string& state);

// Open (creating) the store and its trash dir.
struct Store {
    base::Fd undo_dir;  // TARGET/.layover-undo or STATE/undo/DEV-INO
    base::Fd dir;       // .../ID
    base::Fd trash;     // .../ID/trash
    std::string rel;    // the store relative to the target ("" when in the state dir)
};
base::Result<Store> open_store(const StoreRef& ref, bool create);
// Remove the store and, when nothing else is left, its parent
// (.layover-undo with its .gitignore and CACHEDIR.TAG, or STATE/undo/DEV-INO).
base::Result<void> remove_store(const StoreRef& ref);
// Record that the store's directory gained or lost names (fsynced at the next flush).
void note_store(Durability& dur, const Store& s);

// Restore every unit (last first; for an undo with --force, later versions
// give way first), then drop staging and the store. Apply's rollback, undo
// and the recovery of either all take exactly these steps.
base::Result<void> revert_txn(int root, const std::string& state, DirCache& dirs, const Txn& t, size_t committed,
                              const DirCache* staged = nullptr);

}  // namespace review
