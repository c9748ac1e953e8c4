// Discarding a finished session off run's exit path (issue 20): the session
// dir is renamed at once into STATE/deleting/ (its name is free again and
// nothing lists it there), and a detached process removes it while run has
// already returned the command's status. On a discard-mounted ext4 the
// synchronous delete cost more than the whole sandbox start-up.
#pragma once
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"

// Where sessions wait for their background removal: STATE/deleting/.
std::string deleting_dir(const std::string& state);

// Move `dir` into deleting_dir(state) and remove it in a detached process
// (stdio on /dev/null, its own session, nice 19; a child nobody waits
// for: the caller, run, exits right after), which holds `lock` while it works so
// that purge_deleting() leaves it alone, and first waits for the process
// `wait_for` (a pidfd; the sandbox still tearing down) to exit. When the
// rename or the fork fails, `dir` is removed here instead (the fork: unless
// still mounted, then purge_deleting() does it later). With `ready` (a
// Remover started by supervise()), the dir is handed to it instead of a fork.
// Either remover then purges deleting_dir() (purge_deleting), off run's exit.
class Remover;
// `held` (a namespace the command's exit left alive, [sync 7]) is dropped by
// the remover first, so that its teardown is not on run's exit path.
base::Result<void> remove_in_background(const std::string& state, const std::string& dir, base::Fd lock,
                                        base::Fd wait_for = base::Fd(), Remover* ready = nullptr,
                                        base::Fd held = base::Fd());

// A remover forked ahead of time, while the sandbox starts (on the other
// core), so that a discarding run's exit pays for no fork (issue 20): it
// waits for one message, the dir to remove with the session lock
// (SCM_RIGHTS), then for `wait_for` (a pidfd of the setup process) to exit,
// and removes the dir. At EOF, nothing handed over (the session is kept, or
// run died), it exits and removes nothing. Detached as the forked remover is.
class Remover {
public:
    Remover() = default;
    // Invalid when the fork failed: remove_in_background() then forks.
    static Remover start(int wait_for);
    bool valid() const { return sock_.valid(); }
    // The dir (already in deleting_dir), the lock, and a namespace to drop
    // first (none: invalid), which is closed here once sent; false if the
    // remover is gone.
    bool hand_over(const std::string& path, int lock_fd, base::Fd& held);

private:
    base::Fd sock_;
};

// Remove `dir` (a session's or a trash entry's) for good, moved into
// deleting_dir(state) first, as NAME.TAG.PID: a kill during a long removal
// leaves the rest there, unlisted, where purge_deleting() sweeps it, never a
// half-removed dir in sessions/ or the trash (attack24: `gc` removed in
// place, and a kill left a session dir without its metadata in sessions/,
// listed by nothing and swept by nothing). Where the rename fails
// (sessions/ a mount of its own), `dir` is removed where it is.
base::Result<void> remove_aside(const std::string& state, const std::string& dir, const char* tag);

// Remove entries of deleting_dir(state) that no live remover holds (one whose
// remover was killed, or a crash between rename and fork). Best effort.
void purge_deleting(const std::string& state);
