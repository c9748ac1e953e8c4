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

// A detached sysfs, read-only, nosuid, nodev, noexec, scoped to the calling
// thread's network namespace (made by a process in it, with CAP_SYS_ADMIN
// over the user namespace that owns it). EPERM where /sys is partly covered
// on the host (as in some containers: the kernel then refuses a new one).
base::Result<base::Fd> make_sysfs();
// A detached clone of the host's /sys/fs/cgroup (with what is mounted below
// it), read-only, if it is a mount; else an invalid Fd.
base::Result<base::Fd> clone_cgroup();
// Mount `sysfs` on /sys (over the host's, which is locked below it) and the
// cgroup clone, if any, on its /sys/fs/cgroup.
base::Result<void> attach_sysfs(base::Fd sysfs, base::Fd cgroup);

}  // namespace overlay
