// The status snapshot of an ended session (docs/design.md, "Status again:
// the ended session's snapshot"): what `status`'s walk produced (the
// change list, the ignored count, the hidden paths met), with what it
// depended on outside the upper layer: the real side of every upper entry
// it looked at (its key, or absent), and the stat of every dir of the live
// upper it walked. Tagged with the session's write generation
// (session::read_gen) and the walk's inputs (flags, rules). A repeated
// `status` whose generation, inputs, dirs and real keys all still match
// takes the changes from here instead of walking both trees.
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "capture/scan/caches/verdicts.h"
#include "capture/scan/entry/change.h"
#include "helper/base/result.h"

namespace capture {

// A path's stat as the walk saw it (relative to the target, or to the live
// upper for SnapshotKeys::dirs); absent: the walk found nothing there (ENOENT).
struct PathKey {
    std::string path;
    bool absent = false;
    StatKey key;
    bool operator==(const PathKey&) const = default;
};

// Recorded by the walk (ScanOptions::record_keys), in walk order.
struct SnapshotKeys {
    std::vector<PathKey> real;  // the real side of each upper entry looked at, and of each gone entry
    std::vector<PathKey> dirs;  // the live upper's dirs walked ("" its root)
};

struct StatusSnapshot {
    uint64_t gen = 0;
    std::string inputs;  // status_inputs()
    uint64_t ignored = 0;
    std::vector<std::string> excluded_seen;
    // Change::risk_free_cached holds "read before at these stats, no content
    // risk" (the verdict cache's, or the walk's own read); content_read is
    // not kept (NotRead): a file with a risk is read again.
    std::vector<Change> changes;
    SnapshotKeys keys;
};

// Pure: the stored form and back. A malformed, truncated or foreign file
// parses to false (it is only a cache).
// serialize_snapshot writes `changes` in place of s.changes.
std::string serialize_snapshot(const StatusSnapshot& s, std::span<const Change> changes);
bool parse_snapshot(std::string_view data, StatusSnapshot* out);

// Pure: a key whose ctime is this close to `start_ns` (or later) is racy
// (kRacyNs, as the verdict cache's): a snapshot holding one is not stored.
bool snapshot_racy(const SnapshotKeys& k, int64_t start_ns);

// The file in the session dir: read (missing, foreign or not the caller's:
// false), and written 0600 by temp + rename, not fsync'ed (lost or torn: none).
// `full`: the snapshot of full change records (status --json), a file of its own.
bool load_snapshot(int session_dirfd, bool full, StatusSnapshot* out);
base::Result<void> store_snapshot(int session_dirfd, bool full, const std::string& data);

// The key of `name` in `dirfd` ("" : dirfd itself), not following a last
// symlink; false (errno set) when it cannot be stat'ed or lacks a field.
bool stat_key_at(int dirfd, const char* name, StatKey* out);

// Does every key still hold? dirs statx'ed in `upper_fd`, real ones in
// `target_fd` (an absent one must still be ENOENT). `threads`: 1 or 2.
bool snapshot_keys_hold(const SnapshotKeys& k, int upper_fd, int target_fd, int threads);

}  // namespace capture
