// The undo records of a tree (`undo --list`, `undo --last`) and their
// retention: keep the newest N per target and every record younger than D
// days; the rest are pruned at each apply and by `layover gc`.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "review/txn/txn.h"

namespace review {

struct RecordInfo {
    std::string id;
    std::string dir;      // absolute path of the store (what `undo` takes)
    std::string target;   // as the record names it
    std::string source;   // the session or patch applied
    std::string created;  // UTC RFC 3339
    int64_t created_s = 0;
    int64_t created_ns = 0;  // orders records (created_s * 1e9 for old ones)
    size_t paths = 0;        // paths the apply changed
    uint64_t bytes = 0;      // disk usage of the originals kept
    bool in_state = false;   // STATE/undo/... (else TARGET/.layover-undo/...)
    std::string key;         // the target's DEV-INO
};

struct Retention {
    size_t keep = 20;        // newest records kept per target, whatever their age
    int64_t keep_days = 30;  // records younger than this are kept too
};

// One record's undo.json, the one reader of every command that reads a
// record (`undo --list`, `--last`, `undo RECORD`, gc, retention, the undo
// patch's checks). `store`: the record's dir, open; `record`: its path, for
// messages; `id`: its name, which the file must say; `in_state`: its home.
// The error is one line naming the file and the fix. Code ENOENT: there is no
// undo.json, its apply has not finished (under way, or interrupted: the
// journal's recovery owns it), so listings leave it out quietly; any other:
// the record is damaged (unreadable, not JSON, not a finished apply's record
// of this id), which listings show as such and undo refuses.
base::Result<Txn> read_undo_json(int store, const std::string& record, const std::string& id, bool in_state);

// A record read_undo_json refused as damaged: its dir and the error.
struct DamagedRecord {
    std::string dir;
    std::string message;
};

// The finished records of the tree at `root` (both homes), newest first;
// with `damaged`, the damaged ones there too (read_undo_json).
base::Result<std::vector<RecordInfo>> list_records(const std::string& state, int root, const std::string& target,
                                                   std::vector<DamagedRecord>* damaged = nullptr);
// Every finished record in STATE/undo (for gc), newest first within each key.
base::Result<std::vector<RecordInfo>> list_state_records(const std::string& state);

// Pure: which of one target's records (newest first, by created_s) retention
// drops: those past the newest `keep` that are also `keep_days` old or older.
std::vector<size_t> select_pruned(const std::vector<int64_t>& created_newest_first, const Retention& r, int64_t now);

struct Freed {
    size_t count = 0;
    uint64_t bytes = 0;
};
// Retention for the tree at `root` (the caller holds its lock): drop what
// select_pruned picks, never `spare` (the record an apply just wrote).
base::Result<Freed> enforce_retention(const std::string& state, int root, const std::string& target, const Retention& r,
                                      const std::string& spare);

// Pure: "30d", "12h", "90m", "45s", "2w" or a bare number of days, in
// seconds; -1 when malformed.
int64_t parse_age(const std::string& s);

// The one-line command that undoes the latest apply on `target`, quoted for a shell.
std::string undo_command(const std::string& target);

// Remove one record's store (root: the target, or -1 for a state record).
base::Result<void> remove_record(const std::string& state, int root, const RecordInfo& r);

}  // namespace review
