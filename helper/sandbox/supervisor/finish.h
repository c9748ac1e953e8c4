// What happens to a session once its command exits.
#pragma once
#include <string>

#include "helper/sandbox/prepare/prepare.h"

// Sync the upper layer (the overlay was mounted volatile), record the exit,
// release the lock, then keep, discard, or hand over to layover-patch for
// prompt/apply/save:FILE. Returns run's exit code: the command's, or 125
// when the on-exit action failed (the session is then kept).
int finish_run(PreparedRun& run, const std::string& on_exit, int child_code);

// The command left the session with no changes and no history (no frozen
// step, nothing a rollback set aside): such a session is removed at exit.
bool empty_at_exit(const PreparedRun& run);

// Setup failed: a session this run created holds nothing yet and is
// removed; a resumed one is kept as it was.
void finish_failed_run(PreparedRun& run);

// Purge trash entries older than 24 hours (best effort).
void purge_old_trash(const std::string& state);
