// The rename worker's temporary dirs (helper/sandbox/rename/rename_tree.h): a
// directory move the overlay refuses is copied into a temporary dir of the
// destination, then renamed into place. A worker that dies mid-copy (a
// kill, the OOM killer, --max-memory, a supervisor SIGKILLed) leaves it in
// the upper layer, where the review would show it as the agent's. Each
// name carries a tag the sandbox cannot forge: SipHash-2-4 of the call's
// id under a 128-bit key kept in the session dir (outside the sandbox's
// view), never in the upper layer. A dir the agent names
// `.layover-rename-...` itself carries no valid tag and is never removed.
// The key file marks a session whose upper may hold such leftovers: swept
// at the run's end when a worker died with a call in hand, else by the
// next resume, status, diff or save, and before any freeze of the upper
// (a checkpoint, rollback, fork) (docs/security.md, "Directory renames").
#pragma once
#include <cstdint>
#include <string>

#include "helper/base/result.h"

namespace rename_temps {

// 16 random bytes, as 32 hex digits.
base::Result<std::string> new_key();
// SipHash-2-4 (the reference algorithm) of `msg` under the 16-byte key.
uint64_t siphash(const std::string& key16, const std::string& msg);
// ".layover-rename-<id hex>-<tag hex>"; key: 32 hex digits.
std::string temp_name(const std::string& key, uint64_t id);
// Whether `name` is one temp_name() gives under `key`, for any id.
bool is_temp_name(const std::string& key, const std::string& name);

// <session>/rename-temps: the key, 32 hex digits.
std::string key_path(const std::string& session_dir);
// The key in use: the file's (an earlier run's leftovers may still wait
// for it) or a new one, written there first.
base::Result<std::string> key_for_run(const std::string& session_dir);

// Every dir of the layer named by temp_name() under `key`, removed with
// what it holds (its name is its proof: nothing else is touched). False:
// some dir could not be read (another try later may find more).
bool sweep_layer(const std::string& layer, const std::string& key);
// The session's upper and scratch layers swept with its key, when it has
// one; the key file then removed, unless a layer could not be read whole.
// Call it only while no sandbox runs on the session (its lock free or held
// by the caller), as the session's owner for mode-000 dirs.
void sweep_session(const std::string& session_dir);
// The session's live upper swept with its key, when it has one; the key
// kept (a run may still be using it). Before a freeze of the upper: every
// freeze of a kept session, and a running one's under the freeze rule
// (nothing copying), so that no step ever holds a leftover. False: no
// key (nothing was swept).
bool sweep_upper(const std::string& session_dir);
// The key file removed (no call of this run was left half-done).
void forget_key(const std::string& session_dir);

}  // namespace rename_temps
