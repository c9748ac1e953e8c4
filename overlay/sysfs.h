// A /sys of the sandbox's own network namespace (--network loopback/none).
// The host's /sys lists the host's interfaces (/sys/class/net/eth0/address
// is its MAC); sysfs's net/ directories show the devices of the network
// namespace of whoever mounted it, so a fresh sysfs made from inside the new
// namespace shows only its `lo`. The rest of sysfs is global and looks as
// the host's does. With --network host the host's /sys stays.
#pragma once
#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace overlay {

// The sandbox's /sys, detached: a fresh sysfs, read-only, nosuid, nodev,
// noexec, scoped to the calling thread's network namespace (made by a
// process in it, with CAP_SYS_ADMIN over the user namespace that owns it),
// and a read-only clone of the host's /sys/fs/cgroup (with the mounts below
// it) if that is a mount. The sysfs fails with EPERM where /sys is partly
// covered on the host (as in some containers: the kernel then refuses a new
// one), with an error that names --network host.
struct OwnSys {
    base::Fd sysfs, cgroup;
};
base::Result<OwnSys> make_own_sys();
// Mount it on /sys (over the host's, which stays locked below it).
base::Result<void> attach_own_sys(OwnSys sys);

}  // namespace overlay
