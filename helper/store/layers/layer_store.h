// The shared layer store (docs/design.md, "The layer store"): frozen layers
// shared by reference, so that a fork costs O(steps), not O(files).
//   STATE/layers/ID/          a frozen layer (an overlayfs upper, never written again)
//   STATE/layers/.lock        flock: shared while references are made, exclusive for the sweep
//   SESSION/steps/0003.ref    step 3 is layer ID: the file holds ID (32 hex digits)
//   SESSION/steps/0003/       or step 3 held in place (sessions frozen before the store)
// Every reader of a step's layer goes through layer_path/resolve_in: a real
// dir wins over a reference; a reference is resolved beneath STATE/layers,
// never through a symlink.
#pragma once
#include <cstdint>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace steps {

// STATE/layers for a session dir STATE/sessions/NAME (or STATE/trash/NAME).
std::string store_dir(const std::string& session_dir);
// Pure: 32 lowercase hex digits, nothing else.
bool valid_layer_id(const std::string& id);
// The layer ID a NNNN.ref file holds (trailing newline allowed), or an error.
base::Result<std::string> read_ref(const std::string& ref_file);

// Layer n of `container` (SESSION/steps, SESSION/rolled-back, ...): its real
// dir NNNN, else the store's layer NNNN.ref names (which must be a real dir).
base::Result<std::string> resolve_in(const std::string& session_dir, const std::string& container, int n);
// Step n of the session's stack.
base::Result<std::string> layer_path(const std::string& session_dir, int n);
base::Result<base::Fd> open_layer(const std::string& session_dir, int n);
// Whether `container` holds layer n (a dir or a reference).
bool holds_layer(const std::string& container, int n);

// Move layer n of `container` into the store, leaving NNNN.ref (the ref is
// written first: until the rename the dir still wins, so every state in
// between is the same stack). A layer already shared is left alone.
base::Result<void> share(const std::string& session_dir, const std::string& container, int n);
// Copy layer n's reference (it must be shared) and its record, if any, from
// container `from` into `to`.
base::Result<void> copy_ref(const std::string& from, const std::string& to, int n);

// Temp + rename, mode 0600 (records, references).
base::Result<void> replace_file(const std::string& path, const std::string& text);

// flock on STORE/.lock (the store is made when missing).
base::Result<base::Fd> lock_store(const std::string& store, bool exclusive);

}  // namespace steps
