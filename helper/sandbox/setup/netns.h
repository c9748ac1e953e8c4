// --network none: the sandbox gets its own network namespace with only a
// loopback interface, so no host daemon is reachable over TCP or abstract
// unix sockets.
#pragma once
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/base/thread.h"
#include "overlay/sysfs.h"

namespace netns {
base::Result<void> bring_up_loopback();

// The sandbox's network namespace, made on a thread while setup mounts
// (issue 20: creating one takes 0.6-1 ms, as long as all of setup's mounts).
// start() after unshare(CLONE_NEWUSER), with the caps it gives; enter()
// waits for the thread and moves the caller into the new namespace, before
// unshare(CLONE_NEWPID) (no thread may be made after that) and before init
// is forked. Without a thread, start() makes it at once. The thread also
// makes the namespace's own /sys (overlay/sysfs.h), which own_sys() waits
// for and hands over, for setup to mount.
class Pending {
public:
    void start(bool loopback);
    base::Result<overlay::OwnSys> own_sys();
    base::Result<void> enter();

private:
    void make(bool loopback);
    base::StackThread thread_;
    base::Fd ns_;
    overlay::OwnSys sys_;
    std::string error_;
};
}  // namespace netns
