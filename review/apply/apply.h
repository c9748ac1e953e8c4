// Apply a validated patch to a real tree: conflict-checked against the
// patch's base records, all-or-nothing, with an undo record. The engine
// behind `layover apply`, `layover undo`, the prompt's [a] and on-exit apply.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/records.h"
#include "review/diff/hunks.h"
#include "review/diff/merge3.h"

namespace review {

struct ApplyOptions {
    std::string target;  // empty: the manifest's target
    bool dry_run = false;
    bool force = false;                // overwrite conflicts
    std::vector<std::string> only;     // apply only these paths (and their subtrees)
    std::vector<std::string> exclude;  // globs to leave out
    std::string undo_to;               // also export the undo record as a patch file here
    bool progress = false;             // progress line on stderr (tty only)
    // `layover undo PATCH`: leave no undo record of this apply (as undo of a
    // record leaves none), and retire the undo store the patch was exported
    // from when it belongs to this tree.
    bool as_undo = false;
    // With as_undo: refuse (before anything is written) an undo patch this
    // tree's undo records do not vouch for (undo_patch_vouched): it may come
    // from anywhere, and `undo` lists and asks nothing (`undo --yes` clears it).
    bool undo_vouched_only = false;
    // Undo records of this target kept after the apply (--keep-undo, --keep-undo-days).
    Retention retention;
    // --hunks PATH:N / --exclude-hunks PATH:N: these files get the real
    // content with only the chosen hunks applied (numbered as 'diff --hunk-numbers').
    HunkChoices hunks;
    // --conflict=markers: an overlapping 3-way merge writes git's conflict markers.
    bool conflict_markers = false;
    // A second reader of staging's pass over the patch (the risk scan of
    // `apply --yes`), so the patch is not decoded once more for it: called
    // for every file member in archive order, as Patch::read_data's visitor.
    // Then before_commit, once staging is done and before anything is
    // flushed or committed: an error there rolls the staging back (nothing
    // is applied) and is returned. Neither is called when the apply ends
    // before staging (dry run, conflicts, nothing to apply).
    std::function<capture::DataSink(const capture::Member&)> tap;
    std::function<base::Result<void>()> before_commit;
};

// A file whose 3-way merge overlapped: the ranges (base, real, patch).
struct MergeConflicts {
    std::string path;
    std::vector<MergeConflict> ranges;
};

// A file applied hunk by hunk.
struct PartialFile {
    std::string path;                          // raw bytes
    std::vector<size_t> hunks;                 // the hunks applied (1-based)
    size_t of = 0;                             // hunks the file had
    std::string before_fp, after_fp;           // fingerprints of the real content before and after
    uint32_t before_mode = 0, after_mode = 0;  // its permission bits before and after (07777)
};

struct Conflict {
    std::string path;    // raw bytes
    std::string reason;  // one line
    bool hard = false;   // --force does not override it (a hunk chosen on other content, a parent gone)
};

struct ApplyReport {
    std::vector<std::string> applied;  // raw paths written or deleted
    // Files with other hard links on the real tree: written in place, so
    // every name sees the new content (docs/design.md "Hard links").
    std::vector<std::string> linked;
    std::vector<Conflict> conflicts;  // non-empty: nothing was written
    std::string undo;                 // path of the undo record (empty for dry runs / nothing applied)
    // Additions (review): conflicts that --force overrode (their originals are
    // in the undo store), changes that cannot be applied (sockets), and a
    // note when an interrupted apply/undo was recovered first.
    std::vector<Conflict> forced;
    std::vector<std::string> skipped;
    std::string recovered;
    // --undo-to: the undo patch written, or why writing it failed (the apply
    // itself succeeded then, and its undo record is kept).
    std::string undo_patch;
    std::string undo_patch_error;
    // as_undo: the spent undo store that was removed (relative to the target).
    std::string retired;
    // undo of a record: the paths of `applied` its apply added, which the
    // undo removes rather than restores.
    std::vector<std::string> removed;
    // Older undo records of this target that retention removed after the apply.
    Freed pruned;
    // apply --hunks: files applied in part (also in `applied`).
    std::vector<PartialFile> partial;
    // 3-way merges (the patch carried originals): files merged with changes
    // made on the target since the base; those written with conflict markers
    // (also in merged); and the overlapping ranges (of marked files, or of
    // files left as conflicts).
    std::vector<std::string> merged, marked;
    std::vector<MergeConflicts> merge_conflicts;
    // undo of a record: what its apply applied (a session's name or a patch
    // file's path) and the tree it wrote, as the record names them.
    std::string undone_source, undone_target;
    // Changes the target already had as the patch makes them (a patch
    // applied twice): no conflict, nothing written (review/apply/already.h).
    std::vector<std::string> already;
};

// Returns an Error for invalid input or an I/O failure (after rolling back);
// conflicts are not an Error: they come back in the report with nothing applied.
base::Result<ApplyReport> apply_patch(const capture::Patch& patch, const ApplyOptions& opts);

}  // namespace review
