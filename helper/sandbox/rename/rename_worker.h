// The rename worker: a fork of the supervisor that joins the sandbox's user
// and mount namespaces (the caller's uid owns them), gives up every
// capability, sets no_new_privs and the sandbox's rlimits, and then performs
// the renames the supervisor hands it (rename_call::Request) with the task's
// own dirfds: renameat2 as asked, and on the overlay's EXDEV for a directory
// the copy of rename_tree.h. It sees what the sandbox sees and may do only
// what the sandbox may; it lives in the host's PID namespace, out of the
// sandbox's sight, non-dumpable.
#pragma once
#include "helper/base/child.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/sandbox/limits/limits.h"
#include "helper/sandbox/rename/rename_call.h"

namespace rename_worker {

struct Worker {
    base::Child child;  // killed and reaped when the supervisor is done
    base::Fd sock;      // requests out, replies (rename_call::Reply) in
};

// userns, mntns: open /proc/PID/ns/{user,mnt} of a task of the sandbox.
// temps_key: names the temporary dirs of its copies (helper/store/records/rename_temps.h).
base::Result<Worker> start(int userns, int mntns, const Limits& limits, const std::string& temps_key);

// What the worker does with one request; olddir/newdir are the task's
// dirfds (or AT_FDCWD for absolute paths). Returns 0 or a positive errno.
// Exposed for the unit tests, which call it on a plain directory.
int perform(int olddir, int newdir, const rename_call::Request& r, const std::string& temps_key);

}  // namespace rename_worker
