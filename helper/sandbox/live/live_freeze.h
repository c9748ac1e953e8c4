// The sandbox side of the checkpoint of a running session (docs/history.md,
// "The freeze rule"). Setup, which becomes init, owns the overlay's
// superblock (its user namespace mounted it), so it can remount it read-only and
// mount the next overlay over the target; the supervisor, outside, does the
// rest (the rename of the layers, the record, naming busy processes:
// helper/sandbox/live/live_checkpoint.cc). Requests come one at a time on their
// own socketpair (SandboxPlan::freeze_fd), one message each, answered "0"
// or "1" + errno + tab + a one-line error:
//   R       remount the overlay on the target read-only (EBUSY while any
//           file on it is open for writing)
//   W       remount it read-write again (a rollback)
//   M<n> W  mount a new overlay over the target: upper SESSION/upper, work
//           SESSION/work/W, lowers steps n..1, the run's mask, then the
//           real target
#pragma once
#include <sys/types.h>

#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"

struct SandboxPlan;

namespace live_freeze {

struct Fds {
    base::Fd session, target;  // opened in setup's namespace before any mount covers them
    base::Fd store;            // STATE/layers, when it exists: the steps shared by reference
    base::Fd mask;             // the run's mask over the real target (overlay/mask.h), or invalid
    int first = 1;             // the lowest step with a layer (those below were squashed)
    std::string unavailable;   // why not (then every request is refused with it)
};

// Before the mount plan. Never fails the run: a target the kernel will not
// clone (host mounts below it) only makes checkpoints of it unavailable.
Fds open(const SandboxPlan& plan);
// The target's mask (overlay::Handles::mask), kept for the next overlay:
// the paths it keeps missing are those missing when the run began.
void keep_mask(Fds& fds, const base::Fd& mask);
// After the mount plan, before init: the target mount shared, so that the
// command's namespace (nested, owned by another user namespace) gets a
// slave copy and a mount over the target propagates into it, locked there.
base::Result<void> share_target(const SandboxPlan& plan);
// One request from the supervisor on `ctl` (readable), answered. False once
// the supervisor has closed its end: stop polling it. init serves these
// between its signals (helper/sandbox/setup/init.cc).
bool serve_one(const SandboxPlan& plan, Fds& fds, int ctl);

}  // namespace live_freeze
