// What a killed step operation leaves, the layer store's sweep, and the
// sizes of a session's layers (docs/history.md, "Faults" and "Life cycle").
#pragma once
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "helper/base/result.h"

namespace steps {

// One session's leftovers of a killed freeze, share, rollback or undo, each
// as a sentence; with `fix`, each fixable one is finished or undone (the
// caller holds the session's lock) and the sentence says what was done.
struct Problem {
    std::string what;
    bool fixable = true;  // false: a lost layer, an unreadable stack (reported only)
};
std::vector<Problem> check_history(const std::string& session_dir, bool fix);

// The layer ids some session (sessions/, trash/, a half-built fork)
// refers to from any of its dirs (steps/, rolled-back/, steps.rb/, ...).
std::set<std::string> referenced_layers(const std::string& state);

struct Swept {
    std::vector<std::string> ids;
    uint64_t bytes = 0;
};
// Remove the store's layers no session refers to (under the store's
// exclusive lock, so no reference is being made meanwhile).
base::Result<Swept> sweep_store(const std::string& state, bool dry_run);

// Rolled-back layers follow the trash's clock: a session's rolled-back/ older
// than `max_age_s` (its `at` file's mtime) loses its layers; `expired` records
// when, for `rollback --undo` to say so. The sessions whose set went.
std::vector<std::string> expire_rolled_back(const std::string& state, int64_t max_age_s, bool dry_run);

// Every layer a session holds (its live upper, its steps, what a rollback set
// aside), each once: the store's layers by id, the others by path.
struct Layers {
    std::vector<std::string> own;     // real dirs inside the session
    std::vector<std::string> shared;  // store layer ids
};
Layers session_layers(const std::string& session_dir);
// The dirs of all of them but the live upper (--max-size counts them too).
std::vector<std::string> frozen_layers(const std::string& session_dir);
// The allocated bytes of one layer dir (0 when unreadable).
uint64_t layer_usage(const std::string& dir);

// A session's size, the one definition `sessions` and `gc` show: the
// allocated bytes of every layer it holds (session_layers), each once; its
// bookkeeping (meta.json, the lock, overlayfs's work dir) is not counted, so
// an empty session is 0. `upper_bytes`: the live upper's, when the caller
// walked it already (session::list's with_size); else it is walked here.
// `store_cache` keeps the store's layers measured once across sessions.
struct Size {
    uint64_t bytes = 0;               // every layer, the store's it refers to too
    uint64_t store_bytes = 0;         // the part held in the layer store (forks share it)
    std::vector<std::string> shared;  // those store layer ids
};
Size session_size(const std::string& session_dir, std::map<std::string, uint64_t>* store_cache,
                  const uint64_t* upper_bytes = nullptr);

}  // namespace steps
