// Session history on disk (docs/history.md): each step a frozen layer.
//   SESSION/steps/0001/       frozen upper of step 1 (never written again)
//   SESSION/steps/0001.json   its record: label, start, end, touched paths
//   SESSION/steps/live.json   the live upper's label and start time
//   SESSION/upper/            the live upper
// The view is upper : step N : ... : step 1 : target.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "helper/base/result.h"

namespace base::jsonread {
class Parser;
}

namespace steps {

// A path a step touched and how, against the view just before the step:
// A added, M content changed, D deleted, T type changed (or a dir's content
// replaced: an opaque dir), mode (mode or xattrs only).
struct Touched {
    std::string path;
    std::string kind;
    bool operator==(const Touched& o) const { return path == o.path && kind == o.kind; }
};

struct Record {
    int n = 0;
    std::string label;       // the command line, or checkpoint's -m
    std::string start, end;  // UTC RFC 3339
    std::vector<Touched> paths;
    bool missing = false;   // the layer has no readable record (shown, never trusted)
    bool squashed = false;  // merged into a later layer past the depth limit (docs/history.md)
    bool live = false;      // in a patch: the live changes, not a frozen step
    // `paths` not computed yet: a freeze commits first and leaves them to the
    // first reader that needs them (steps::settle; docs/history.md).
    bool pending = false;
};

// The live upper's label and start, written when a run begins, and its end,
// when the run ends (the step frozen from it, at the next resume, ended then).
struct Live {
    std::string label, start, end;
};

constexpr int kMaxSteps = 9999;  // four digits in the layer names
// The deepest stack a freeze makes by default (run --max-steps): past it the
// oldest two layers are squashed into one (helper/store/layers/squash.cc).
// overlayfs stacks at most 500 lowers; the issue picks 64 from the stat bench.
constexpr int kMaxDepth = 64;

std::string steps_dir(const std::string& session_dir);
std::string layer_dir(const std::string& session_dir, int n);
std::string record_file(const std::string& session_dir, int n);

// Pure: a record as JSON text and back. The reader treats the text as
// untrusted (a sandboxed program could not write it, but a copied session
// dir could be anything): strict JSON, known kinds, bounded sizes.
std::string record_to_text(const Record& r);
base::Result<Record> record_from_text(std::string_view text);
// The same object, appended to / read from a larger JSON text (a patch's
// manifest carries the records: capture/patch/manifest_steps.cc).
void record_json(std::string* out, const Record& r);
base::Result<Record> read_record(base::jsonread::Parser& p);
std::string live_to_text(const Live& l);
base::Result<Live> live_from_text(std::string_view text);

// The number of frozen steps: layer dirs 0001..N, contiguous. Anything else
// in steps/ (a gap, a foreign name, a symlink) is an error naming it.
base::Result<int> count(const std::string& session_dir);
// Every step's record, oldest first (a layer without a readable record gets
// one with `missing` set and the reason as its label).
base::Result<std::vector<Record>> read_all(const std::string& session_dir);

base::Result<void> write_live(const std::string& session_dir, const Live& l);
base::Result<Live> read_live(const std::string& session_dir);
// When step n (0: the live upper) began: its record's, or live.json's, start;
// for the stack's first layer after a squash, the earliest of the steps it
// holds ("" when one of theirs cannot be read).
base::Result<std::string> layer_start(const std::string& session_dir, int n);
// At the end of a run: its live record gets `end` (best effort).
void mark_live_ended(const std::string& session_dir, const std::string& end);

// Freeze the live upper as step N+1 (record first, then the rename that
// commits it, then a fresh empty upper). Its record ends at `end`, or, when
// not running, when its run ended (Live::end) if the live record says. An upper with no entries is not a
// step: returns 0 and changes nothing. Else the new step's number. `target`
// is the real tree, for the record's touched paths. Run it where the
// session's files are readable (the owner user namespace, or as the owner).
// max_depth: rollback freezes past kMaxDepth (the stack shrinks right after).
// The commit is one rename (RENAME_EXCHANGE of the upper with an empty
// layer dir): there is always an upper. An empty top layer whose record
// names paths is one cut short before it, and the next freeze reuses it.
// Fault points (base::fault_point, PHASE:POINT): "record" after the record,
// "layer" after the empty layer dir, "renamed" after the commit.
// running: the session's overlays are mounted (a live checkpoint): a squash
// past max_depth moves the layers it replaces to SESSION/retired/ instead of
// removing them (the covered overlays still read them); a freeze that is not
// running (a resume) removes what a running one left there.
base::Result<int> freeze_live(const std::string& session_dir, const std::string& target, const std::string& end,
                              int max_depth = kMaxDepth, const char* phase = "freeze", bool running = false);

// Compute and write the paths of every record a freeze left pending (each
// layer against the view below it, which never changes under a pending
// record: a squash settles first). Run as the session's owner, like a
// freeze. A record whose layer cannot be read gets no paths and says why in
// its label, as a freeze did. Returns how many were settled.
base::Result<int> settle(const std::string& session_dir, const std::string& target);

// The touched paths of layer `n` against the view below it (steps n-1..1
// over the target), sorted by path.
base::Result<std::vector<Touched>> touched(const std::string& session_dir, int n, const std::string& target);
// The same for any layer dir (the live upper: below = the step count).
base::Result<std::vector<Touched>> touched_layer(const std::string& layer, const std::string& session_dir, int below,
                                                 const std::string& target);

// A flattened upper: one dir holding what the live upper over every step
// would give as a single upper (whiteouts, opaque dirs as overlayfs makes
// them; files hard-linked, never copied). Capture scans it like an upper.
// Made in SESSION/flat.PID (a stale one is removed first); the caller
// removes it with remove_flat.
base::Result<std::string> flatten(const std::string& session_dir);
// The same for steps from..to only (and the live upper on top when `live`):
// what those layers did, as one upper over the view below step `from`.
base::Result<std::string> flatten_range(const std::string& session_dir, int from, int to, bool live);
void remove_flat(const std::string& flat_dir);
// One layer's structure, its files hard-linked.
base::Result<void> copy_layer(const std::string& from, const std::string& to);
// Into the new session dir `to` (made here): steps 1..at of `from` as
// references to the layer store (helper/store/layers/layer_store.h; `from`'s layers
// are moved into it first), their records, and an empty live upper. O(steps).
base::Result<void> fork_steps(const std::string& from, const std::string& to, int at);
// The half-built forks in `sessions` (.fork-NEW.PID) whose process is gone.
std::vector<std::string> stale_forks(const std::string& sessions);

}  // namespace steps

namespace steps {

// Rollback of a kept session (helper/store/history/rollback.cc): the view becomes
// what it was at the end of step n (0: the real tree alone). The live changes
// are frozen as a step first; steps n+1..N are set aside in
// SESSION/rolled-back/ (references into the layer store), replacing an
// earlier rollback's. One exchange of steps/ commits it. Returns the number
// of steps set aside. Run it as the session's owner (the freeze reads the upper).
base::Result<int> rollback(const std::string& session_dir, int n, const std::string& target);
// Finish (committed) or undo (not yet) a rollback or undo that was killed;
// what it did, or "" when nothing was pending. Rollback, undo, fork and
// `doctor --fix` call it under the session's lock.
base::Result<std::string> finish_pending(const std::string& session_dir);
// Bring the last rollback's layers back, if nothing was done since: the
// session still ends at the step rolled back to, with no live changes.
base::Result<int> rollback_undo(const std::string& session_dir);
std::string rolled_back_dir(const std::string& session_dir);

}  // namespace steps

namespace steps {

// The squash past the depth limit (helper/store/layers/squash.cc, docs/history.md):
// layers F..N are the stack; steps 1..F-1 were squashed into layer F, their
// records kept with "squashed". F is 1 until the first squash.
base::Result<int> first_layer(const std::string& session_dir);
// The same, for a stack of n steps the caller just counted (one listing of
// steps/ less: open_session_trees has just counted them).
int first_layer(const std::string& session_dir, int n);
// Merge the oldest two layers into one (crash-safe; finishes a killed one
// first). Run it as the session's owner.
// keep_aside: the replaced layers go to SESSION/retired/ (a running
// session's mounted overlays still read them), removed by the next freeze
// that is not running.
base::Result<void> squash_oldest(const std::string& session_dir, bool keep_aside = false);
// Squash the oldest layers until a stack whose top layer is `top` (the one
// a freeze is about to add, or a revert added) is at most max_depth deep;
// the pending records' paths are computed first (settle).
base::Result<void> squash_past(const std::string& session_dir, const std::string& target, int top, int max_depth,
                               bool keep_aside = false);
// Remove the layers a running session's squashes moved aside (only when no
// overlay of the session is mounted: a resume, before it mounts).
base::Result<void> remove_retired(const std::string& session_dir);
// Finish a squash that was killed after its commit point (true), or remove a
// killed one's leftovers (false).
// keep_aside: as squash_oldest's.
base::Result<bool> finish_squash(const std::string& session_dir, bool keep_aside = false);
// Layers (topmost first) merged into one new upper-like dir `to`, as one
// upper over the others would hold them (flatten's merge; files hard-linked).
base::Result<void> merge_layers(const std::vector<std::string>& top_first, const std::string& to);
// Rollback, fork (and revert) to step n: an error when n was squashed.
base::Result<void> check_reachable(const std::string& session_dir, int n);
// A step's record file (temp + rename).
base::Result<void> write_record(const std::string& session_dir, const Record& r);

}  // namespace steps
