// One apply (or undo) as a list of units, each enough to restore one path to
// its prior state. Serialized as the crash journal (STATE/journal/) while an
// apply runs, and as the undo record (STORE/undo.json) after. The store is
// STATE/undo/DEV-INO/ID when the state dir is on the target's mount, else
// TARGET/.layover-undo/ID (review/apply/recover.h).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"
#include "helper/base/result.h"

namespace review {

// Add: the path was absent; the staged entry was renamed into place.
// Replace: the original was exchanged with the staged entry, then moved to
//   the undo store. Delete: the original was moved to the undo store.
// InPlace: a file with other hard links; the original content was copied to
//   the store, the new content written into the same inode.
// Meta: mode/xattrs/mtime changed in place.
enum class Op { Add, Replace, Delete, InPlace, Meta };
const char* op_name(Op op);

// An lstat summary of one entry, for "is this still what we left?" checks.
struct EntryStat {
    std::string path;  // relative to the unit's path for subtree lists; unit path otherwise
    bool exists = false;
    capture::Type type = capture::Type::None;
    uint32_t mode = 0;
    uint64_t ino = 0;
    uint64_t size = 0;
    int64_t mtime_ns = 0;
    int64_t ctime_ns = 0;
};

struct Unit {
    std::string path;  // raw bytes, relative to the target
    Op op = Op::Add;
    std::string tmp;   // staged entry, relative to the target (beside path)
    std::string slot;  // entry name in the undo store holding the original
    uint64_t new_ino = 0;
    uint64_t old_ino = 0;
    // The original's attributes (Meta and InPlace restore them).
    uint32_t old_mode = 0;
    int64_t old_mtime_ns = 0;
    std::map<std::string, std::string> old_xattrs;  // user.* only
    // What apply left, for undo's conflict check: the entry and, for
    // directories it created, every entry beneath (paths relative to it).
    EntryStat after;
    std::vector<EntryStat> after_tree;
};

// What a record is, and how far it got. Written as "apply"/"undo" and
// "staging"/"committing"/"done".
enum class TxnKind { Apply, Undo };
enum class TxnState { Staging, Committing, Done };
const char* txn_kind_name(TxnKind k);
const char* txn_state_name(TxnState s);

struct Txn {
    TxnKind kind = TxnKind::Apply;
    std::string id;
    std::string target;         // absolute path when started
    uint64_t dev = 0, ino = 0;  // the target root's identity
    // The target root's birth time (statx STATX_BTIME), 0 when the
    // filesystem has none or the record is older: a tree removed and made
    // again can get the same inode, and its journal is not this one's.
    int64_t btime_ns = 0;
    TxnState state = TxnState::Staging;
    std::string source;      // the patch or session applied
    std::string created;     // UTC RFC 3339
    int64_t created_ns = 0;  // CLOCK_REALTIME, orders records made within one second (0 in old records)
    // The undo store: ".layover-undo/ID" (relative to the target), or, when
    // in_state, "undo/DEV-INO/ID" (relative to the state dir).
    std::string store;
    bool in_state = false;
    std::string record;  // undo only: the record being undone (absolute)
    bool force = false;  // undo only: --force (a recovery finishes it the same way)
    std::vector<Unit> units;
};

std::string txn_to_json(const Txn& t);
// What t.store must be for t's id, target and in_state (records are checked against it).
std::string store_rel_of(const Txn& t);
base::Result<Txn> txn_from_json(const std::string& text);

// Undo stores (`.layover-undo`, at any depth) and staged names (`.layover-tmp.*`):
// reserved names a patch may never write.
inline constexpr const char* kUndoDir = ".layover-undo";
inline constexpr const char* kTmpPrefix = ".layover-tmp.";
bool is_reserved_path(const std::string& rel);
// Slot names and ids are [0-9a-z-]; anything else in a record is hostile.
bool valid_token(const std::string& s);

}  // namespace review
