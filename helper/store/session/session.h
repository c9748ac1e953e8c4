// The session store: ${LAYOVER_STATE_DIR:-/var/tmp/layover-$UID}/sessions/NAME/
//   meta.json  target, command, label, created time, status, supervisor pid,
//              the change count at exit, and when it was applied or saved
//   upper/     the overlay's upper layer (the session's changes)
//   work/      overlay workdir, recreated fresh for every mount (volatile)
//   lock       flock held by the supervisor while the session runs
// Trash (discarded from the prompt, kept 24 h): STATE/trash/NAME/
// Being removed in the background (--on-exit discard): STATE/deleting/
// (helper/sandbox/prepare/discard.h)
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace session {

// The resource limits a run had (helper/sandbox/limits/limits.h; 0: none).
struct RunLimits {
    uint64_t timeout_ms = 0, max_pids = 0, max_size = 0, max_memory = 0, min_free = 0, min_free_inodes = 0;
};

struct Meta {
    std::string name;
    std::string target;                // absolute, symlink-free path of the real tree
    std::vector<std::string> command;  // argv of the sandboxed command
    std::string created;               // UTC RFC 3339
    int64_t created_ns = 0;            // CLOCK_REALTIME ns at session creation
    // A fork: when the session it was forked from began (its steps' copies
    // are older than the fork); 0: created_ns. See began_ns().
    int64_t began_ns = 0;
    int64_t pid = 0;                   // supervisor pid while running
    std::string status;                // "running" or "exited" (as last written)
    int exit_code = -1;                // child's exit status once exited
    RunLimits limits;                  // of the last run
    std::string stopped;               // why a limit stopped the last run ("--timeout 2s reached"), or empty
    std::string network;               // "loopback", "none" or "host"
    std::vector<std::string> hidden;   // relative to target: hidden inside, never captured
    std::vector<std::string> outside;  // roots with a scratch layer: outside/<index>/ (never applied)
    // The life cycle after the run (cleared when a run resumes the session).
    std::string label;     // what the user started, when not `command` (e.g. "python: Sandbox(...)")
    int64_t changes = -1;  // counted at exit by the scan (-1: unknown, e.g. a crash)
    std::string applied;   // UTC RFC 3339 of a full apply, or empty
    std::string undo;      // that apply's undo record
    std::string saved;     // the file a save wrote, or empty
    // The last run's --on-exit (keep, discard, apply, prompt, save:FILE): a
    // crashed session whose run was to discard it is named by `sessions`
    // and `gc` (crashed_discard_note), never removed unasked.
    std::string on_exit;
};

// When the session's layers began: the earliest copy-up it can hold (the
// stale-copy check's session start, docs/security.md "When the copy was made").
inline int64_t began_ns(const Meta& m) {
    return m.began_ns > 0 && m.began_ns < m.created_ns ? m.began_ns : m.created_ns;
}

// A session whose last run was to discard it (killed or stopped first: it
// is still here) noted none of its renames and links (they cost a kept run
// ~150 us each): its notes count as full from when the session began, so
// the stale check takes the safe side (helper/store/session/first_copies.h,
// FirstCopiesOnce; docs/security.md, "When the copy was made"). -1: noted.
inline int64_t unnoted_since(const Meta& m) { return m.on_exit == "discard" ? began_ns(m) : -1; }

struct Info {
    Meta meta;
    std::string dir;           // session directory
    std::string state;         // running, crashed, applied, saved, empty or kept (see state_of)
    uint64_t upper_bytes = 0;  // filled by list(..., with_size=true) only
    // The change count: meta.changes as the exit's scan recorded it, or (a
    // live or crashed session) the upper layer's non-directories, counted by
    // the same walk as upper_bytes (with_size only).
    int64_t changes = -1;
    bool changes_exact = false;
    int64_t age_days = 0;
};

// Resolve and validate the state dir. The default must be a real directory
// owned by the caller with mode 0700; it is created when missing.
base::Result<std::string> state_dir();

std::string sessions_dir(const std::string& state);
std::string trash_dir(const std::string& state);
std::string upper_dir(const std::string& session_dir);
std::string work_dir(const std::string& session_dir);

// A fresh default name: YYYYmmdd-HHMMSS-xxxx, drawn again (up to 64 times)
// while `taken` says a session or trash entry has it: two runs in one second
// share a suffix 1 time in 65,536, and the second then resumed the first's
// session (found by attack22).
std::string new_name(const std::function<bool(const std::string&)>& taken = nullptr);

base::Result<Meta> read_meta(const std::string& session_dir);
// Atomic (temp + rename), mode 0600.
base::Result<void> write_meta(const std::string& session_dir, const Meta& m);

// Exclusive, non-blocking lock on the session; fails with a clear message
// naming the running pid when another supervisor holds it.
base::Result<base::Fd> lock(const std::string& session_dir, const std::string& name);
bool is_locked(const std::string& session_dir);

// The session's write generation (docs/design.md, "Status again: the ended
// session's snapshot"): a counter every writer of an ended session's upper
// layer, steps or inputs bumps before it writes anything. lock() bumps it,
// so every exclusive holder does. Kept as the xattr user.layover.gen of the
// session dir (one syscall each way, no inode made on a run's start-up).
// read_gen: the value (created as 0 when missing); none when it cannot be
// read (no xattrs there: no snapshot is trusted). bump_gen: +1; when that
// fails, the status snapshot is removed instead.
// The snapshots of the text status and of --json (full change records).
inline constexpr const char* kStatusSnapshotFiles[] = {"status-snapshot", "status-snapshot-full"};
std::optional<uint64_t> read_gen(int session_dirfd);
base::Result<void> bump_gen(int session_dirfd, const std::string& name, const std::string& session_dir);

// running: lock held; crashed: lock free but meta says running; then applied
// or saved when meta records it, empty when the exit's scan found no change,
// kept otherwise.
// A frozen step, or steps a rollback set aside that 'rollback --undo' brings
// back (not yet expired by gc): history, even when the view is the real
// tree. An unreadable steps dir counts as history (keeping is never a loss).
bool holds_history(const std::string& session_dir);
std::string state_of(const std::string& session_dir, const Meta& m);
// Pure: the same from the lock's state.
std::string state_from(bool locked, const Meta& m);
// A crashed session whose run was to discard it (its supervisor killed
// before the discard): the line `sessions` and `gc` print for it, naming
// it and how to drop it; else "". Never removed unasked: what the killed
// run changed may be wanted.
std::string crashed_discard_note(const Info& s);

// Record an apply or a save in the session's meta.json (a session in the
// trash too: `dir` is wherever it is).
base::Result<void> mark_applied(const std::string& dir, const std::string& undo_record);
base::Result<void> mark_saved(const std::string& dir, const std::string& file);
// The change count `sessions` shows (meta.json "changes"; -1: unknown, the
// upper layer's count is shown instead), after a partial apply took some.
base::Result<void> set_changes(const std::string& dir, int64_t changes);

// A directory given where a session (or a patch file) goes: `status
// ~/project`, `apply .`. "'NAME' is a directory, not WHAT: name a session
// (the most recent over DIR is 'S'; ...)", or "" when NAME is no directory.
std::string directory_given(const std::string& state, const std::string& name, const std::string& what = "a session");

// Find by name. An empty name is refused (an unset shell variable, `layover
// discard "$S"`, must never pick a session); a verb whose SESSION may be left
// out takes latest() when none was given.
base::Result<Info> find(const std::string& state, const std::string& name);
// The most recently created session.
base::Result<Info> latest(const std::string& state);
// with_size walks each upper layer for upper_bytes (only `sessions` needs it).
base::Result<std::vector<Info>> list(const std::string& state, bool trash = false, bool with_size = false);

// Remove a directory tree that may hold mode-000 entries (left by the kernel
// in work/work, or by the sandboxed program): done inside a fresh user
// namespace where the caller's own files are fully accessible.
base::Result<void> remove_tree(const std::string& path);

}  // namespace session
