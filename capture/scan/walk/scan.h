// The walk of a session's upper layer against the lower (real) tree: an
// fd-relative walk (openat/statx with AT_SYMLINK_NOFOLLOW; fifos and sockets
// are never opened) that classifies every entry and, for save, records the
// base each change must find on the real filesystem.
// Run it inside userns::enter_owner_ns() so mode-000 entries stay readable.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture/scan/caches/snapshot.h"
#include "capture/scan/entry/change.h"
#include "helper/base/fd.h"
#include "helper/base/gitignore.h"
#include "helper/base/result.h"
#include "helper/store/records/known_bases.h"
#include "helper/store/session/first_copies.h"

namespace capture {

class VerdictCache;
struct LayerIndex;

// status's risk marks (review/prompt/risk_scan.h, WalkRiskReader): the walk
// hands each changed regular file it wants to read() on the walk's own
// threads, open on the fd its stat was taken from (a file wants_path()
// accepts is opened instead of only stat'ed), so the text is read once, with
// no second path lookup. read() must be thread-safe.
class ContentReader {
public:
    virtual ~ContentReader() = default;
    virtual bool wants_path(const std::string& path) const = 0;  // by name: worth opening?
    virtual bool wants(const Change& c) const = 0;
    // At most `size` bytes of `fd` (a regular file, at offset 0); the real
    // side, for the old text, is `name` in `low` (-1: none).
    virtual Change::Read read(const Change& c, int fd, uint64_t size, int low, const std::string& name) = 0;
};

struct Item {
    Change change;
    bool whiteout = false;  // store DIR/.wh.NAME
    bool opaque = false;    // store DIR/.wh..wh..opq after the dir
    uint64_t ino = 0;       // upper inode of a file (hardlinks within the patch)
    uint64_t nlink = 1;
    uint32_t layer = 0;  // scan_layers: the layer holding the entry (0: the topmost)
    // The upper file, left open by a scan with keep_files so the writer need
    // not open it again (invalid: the writer opens it). The item owns it and
    // the writer closes it once the member is made, on the maker's thread:
    // left to the save child's exit, closing 10,000 of them was ~15 ms of
    // that exit, which the save waits for (docs/performance.md, "Save, round 8").
    mutable base::Fd fd;
    // ScanOptions::keep_base_max: the modified file's real side is a file of
    // at most that size, without holes, and text (kTextProbe), as read while
    // its base was fingerprinted; save stores it as an original.
    bool base_text = false;
    // With base_text: the real file, left open by a scan with keep_files so
    // that save reads the original through it (invalid: save opens it by
    // path). The item owns it, and the writer closes it once the original
    // is stored (mutable: the writer has the items const), so that the
    // process's exit does not close 10,000 files on the save's critical path.
    mutable base::Fd base_file;
};

// ScanOptions::changes_apart: the changes of a split dir's pieces, in walk
// order, moved there by the walk's threads as each piece ended; they come
// before items[at].
struct ChangePiece {
    size_t at = 0;
    std::vector<Change> changes;
};

struct ScanResult {
    std::vector<Item> items;                 // walk order: parents before children, names sorted bytewise
    std::vector<ChangePiece> pieces;         // ScanOptions::changes_apart; in walk order
    std::vector<BaseEntry> base;             // empty unless ScanOptions::with_base
    std::vector<std::string> excluded_seen;  // ScanOptions::excluded paths the upper layer holds
    uint64_t ignored = 0;                    // paths left out by ScanOptions::ignore
    uint64_t counted = 0;                    // ScanOptions::count_only: the changes (items stays empty)
    SnapshotKeys keys;                       // ScanOptions::record_keys
    // ScanOptions::note_fresh: (path, session::known_content) of fresh real sides.
    std::vector<std::pair<std::string, std::string>> fresh;
};

struct ScanOptions {
    bool with_base = false;        // fingerprints, staleness, lower subtrees (save)
    int64_t session_start_ns = 0;  // copy-up time when the upper fs has no birth time
    // When each layer of the stack (by Item::layer) began: the run or
    // checkpoint that made it, in ns (capture/scan/layers/layer_starts.h); null or
    // <= 0: session_start_ns. Asked only for a real entry changed since the
    // session began (Walker::first_copy); called from the walk's threads.
    std::function<int64_t(uint32_t)> layer_start;
    // The births of copies the command renamed another file over
    // (helper/store/session/first_copies.h): the earliest bounds a path's copy-up
    // time like the layers do (Walker::settle_first_copy).
    const session::FirstCopiesOnce* first_copies = nullptr;
    // For the text summary of `status`: below an upper dir that has no real
    // counterpart, entries are typed from getdents' d_type, without a statx
    // each (those changes then carry size, mode, mtime 0 and no xattrs). Not with with_base.
    bool summary_only = false;
    // Count the changes (ScanResult::counted) without keeping them: no
    // items (run's exit, which records only the number). Not with
    // with_base or keep_files; reader and mark_stale are not acted on (they
    // need the change kept).
    bool count_only = false;
    // For save: keep changed upper files open (Item::fd), as many as the fd
    // limit comfortably allows.
    bool keep_files = false;
    // 0: walk with a second thread when there is a second CPU (the first dir
    // with two or more subdirs is split in two halves); 1: one thread.
    int threads = 0;
    // Paths (relative to the target) never captured, nor anything below
    // them: the session's hidden paths (session::Meta::hidden).
    std::vector<std::string> excluded;
    // Ignore rules (capture/scan/entry/ignore.h): a matching entry and all below
    // it are left out and counted in ScanResult::ignored, or, with
    // include_ignored, kept with Change::ignored set. The root's
    // .layoverignore itself is never ignored.
    const base::IgnoreRules* ignore = nullptr;
    bool include_ignored = false;
    // status of an ended session: reuse and record content verdicts
    // (capture/scan/caches/verdicts.h). Never for save.
    VerdictCache* verdicts = nullptr;
    // With with_base: real contents a partial apply of this session left or
    // found, or its run's exit saw fresh (helper/store/records/known_bases.h); a
    // base that matches one is not stale. Read only if a copy is stale.
    const session::KnownBasesOnce* known_bases = nullptr;
    // status (not with_base): set Change::stale, as save's base records judge
    // it (capture/scan/entry/stale.h; with known_bases when given).
    bool mark_stale = false;
    // With with_base: judge base records stale (false: the lower is another
    // session's view, `diff A B`, whose times say nothing of copy-ups).
    bool base_stale = true;
    // With with_base: a modified regular file whose real side is a text file
    // of at most this many bytes, without holes, gets Item::base_text (save's
    // originals, read again when written: keeping 1,000 of them from here
    // cost more in page faults and malloc than that read).
    uint64_t keep_base_max = 0;
    // scan_layers: each layer's index (capture/scan/layers/layer_index.h), in the
    // order of layer_fds; null or absent: its dirs are listed.
    std::vector<const LayerIndex*> indexes;
    // status (not with_base): read changed files' text as they are met
    // (ContentReader); the result lands in Change::content_read.
    ContentReader* reader = nullptr;
    // status of an ended session: record, for the status snapshot
    // (capture/scan/caches/snapshot.h), the real side of every upper entry looked
    // at and the stat of every dir of the topmost layer (ScanResult::keys).
    bool record_keys = false;
    // status: only the changes are wanted (not with with_base or
    // keep_files): the changes of a split dir's pieces go, in walk order,
    // into one list of their own (ScanResult::pieces), moved out of their
    // items on the walk's threads; take_changes() hands it on, or puts all
    // in line (docs/performance.md, "Status, sixth pass" and "Status: one
    // list of changes").
    bool changes_apart = false;
    // With changes_apart: room made for this many changes in that line
    // (the session's count at exit; a guess: more grows it).
    size_t changes_hint = 0;
    // run's exit (with count_only): fingerprint the real file or symlink of
    // each change whose real side is still what was copied up (its ctime not
    // later), into ScanResult::fresh, so that a later touch, or an edit
    // undone, of that real file is no stale copy (up to 16 MiB a file, 256
    // MiB a walker).
    bool note_fresh = false;
};

base::Result<ScanResult> scan_upper(int upper_fd, int lower_fd, const ScanOptions& opts);
// A stack of upper layers, topmost first (a session with frozen steps: the
// live upper, then the steps newest first), read as the one upper layer an
// overlay mount of them shows (capture/scan/layers/stack.h).
base::Result<ScanResult> scan_layers(const std::vector<int>& layer_fds, int lower_fd, const ScanOptions& opts);

// The scan's changes in walk order, moved out of its items and pieces
// (which are left empty). A scan whose changes are all in its one piece,
// with room for its items after them, hands that piece's list on.
std::vector<Change> take_changes(ScanResult* scan);
// The same, appended to `to` (the items' changes moved from, the pieces cleared).
void append_changes(ScanResult* scan, std::vector<Change>* to);

// Join a relative path and a name ("" + "a" = "a").
std::string join_path(const std::string& dir, const std::string& name);

}  // namespace capture
