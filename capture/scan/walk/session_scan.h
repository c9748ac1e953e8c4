// A session's two trees (its upper layer and the real target), and the live
// change list behind `layover status`.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "capture/scan/caches/verdicts.h"
#include "capture/scan/entry/change.h"
#include "capture/scan/entry/ignore.h"
#include "capture/scan/entry/step_range.h"
#include "capture/scan/layers/layer_index.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/base/thread.h"
#include "helper/store/session/session.h"

namespace capture {

// With frozen steps (helper/store/layers/steps.h), `steps` holds their layers under
// the live `upper`, newest first; capture reads the stack in place
// (scan_layers, docs/history.md "Capture reads the stack").
struct SessionTrees {
    base::Fd upper, lower;
    std::vector<base::Fd> steps;
    // compare (StepRange::against): the dir of the last of `steps` (what
    // only the other session changed, steps::compare_upper), removed with
    // the last copy.
    std::shared_ptr<std::string> flat;
    // Each layer's step number, in the order of layers() (0: the live
    // upper; -1: compare's layer): for layer_starts (capture/scan/layers/layer_starts.h).
    std::vector<int> step_numbers;
    // ScanOptions::layer_start for these trees.
    std::function<int64_t(uint32_t)> layer_starts(const session::Info& s) const;
    // The stack for scan_layers / write_patch: upper, then the steps.
    std::vector<int> layers() const;
    // The fd of the layer holding a change's upper entry (Change::layer), or -1.
    int holder_of(const Change& c) const;
};
base::Result<SessionTrees> open_session_trees(const session::Info& s, const StepRange& range = {});
// The indexes of the trees' frozen steps (capture/scan/layers/layer_index.h), in
// the order of layers() (null: the upper, compare's layer, or not indexed),
// as the owner (index_layers).
std::vector<std::shared_ptr<const LayerIndex>> index_session_layers(const session::Info& s, const SessionTrees& t);

// `status`'s verdict cache (capture/scan/caches/verdicts.h), kept past the walk so
// the risk marks can use and extend it; store() writes it (best effort).
// With it, the status snapshot of an ended session (capture/scan/caches/snapshot.h):
// used when it still holds, else written (snapshot) when the walk was
// clean (the generation unchanged, no key racy).
struct StatusCache {
    std::unique_ptr<VerdictCache> verdicts;  // null: not used (a running session, a step range, compare)
    base::Fd dir;                            // the session dir
    bool from_snapshot = false;              // the changes came from the snapshot (no walk)
    std::string snapshot;                    // serialized, to write; empty: none
    bool snapshot_full = false;              // of full change records (load_snapshot)
    // The trees the walk opened, handed to the risk marks (session_risks):
    // the stack is opened once, not twice (docs/performance.md, "Status over
    // 50 steps"). Null: the walk failed before opening them.
    std::shared_ptr<SessionTrees> trees;
    // The snapshot is serialized on a thread of its own from the change list
    // session_changes_as_owner returned, while the caller goes on (risk
    // marks, listing: docs/performance.md, "Status, fifth pass"): the list
    // must not change or go until finish_snapshot() (store() calls it).
    // Not thread-safe: one thread calls these.
    void finish_snapshot();
    void store();
    std::unique_ptr<base::StackThread> serializer;  // running, or null
    // The caller will store() the verdicts (status without PATH...): they are
    // written on a thread of their own as soon as the walk is over, and
    // store() writes them again only if the risk marks added some since
    // (VerdictCache::store_early; docs/performance.md, "Status, sixth pass").
    bool store_early = false;
    std::unique_ptr<base::StackThread> early;  // running or done, or null
};

// The classified changes of a running or ended session (no base, no hashing
// beyond the copied-up-but-unchanged check). Enters the owner user namespace
// in the calling process (capture::as_owner_here): call it single-threaded,
// from a process that needs its identity for nothing afterwards (`status`).
// summary_only: enough for the text summary (ScanOptions::summary_only).
// excluded_seen, when given, receives the session's hidden paths that the
// upper layer holds (written inside, never captured). `ignore`: the ignore
// rules' options (capture/scan/entry/ignore.h); *ignored, when given, receives the
// number of paths they left out. `keep`, when given, receives the verdict
// cache instead of it being written here (the caller calls keep->store()).
// `reader`, when given, reads changed files' text during the walk
// (ScanOptions::reader).
base::Result<std::vector<Change>> session_changes_as_owner(const session::Info& s, bool summary_only,
                                                           std::vector<std::string>* excluded_seen = nullptr,
                                                           const IgnoreOptions& ignore = {},
                                                           uint64_t* ignored = nullptr, const StepRange& range = {},
                                                           StatusCache* keep = nullptr,
                                                           ContentReader* reader = nullptr);

// The number of changes (as `status` counts them), scanned in a forked child
// (which enters the owner namespace there), for a caller that must keep its
// own identity: `run` at exit, to record the count and drop an empty session.
// note_fresh (run's exit): also keep, as the session's known contents
// (helper/store/records/known_bases.h), the fingerprint of each change's real file
// still as it was copied up (ScanOptions::note_fresh).
base::Result<int64_t> count_changes_in_child(const session::Info& s, bool note_fresh = false);
// The same count stored as the session's `changes` (-1 when it cannot be
// counted), after part of it was applied (apply --only/--hunks..., the exit
// prompt's picked files): what `sessions` shows. Best effort.
void recount_changes(const session::Info& s);

// Modified files whose real counterpart has other hard links (path, links):
// inside, the overlay's copy-up broke the link, so the other names showed the
// old content; apply writes such files in place and keeps the link.
// From the scan's stat of each real file (Change::old_nlink).
std::vector<std::pair<std::string, uint64_t>> hard_linked_on_real(const std::vector<Change>& changes);

}  // namespace capture
