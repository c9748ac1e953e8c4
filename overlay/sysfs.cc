#include "overlay/sysfs.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include <cerrno>

namespace overlay {

namespace {
constexpr uint64_t kLocked = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
}

namespace {

base::Result<base::Fd> make_sysfs() {
    base::Fd fs(::fsopen("sysfs", FSOPEN_CLOEXEC));
    if (!fs.valid()) return base::sys_error("opening a fresh /sys");
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        return base::sys_error("creating a fresh /sys");
    base::Fd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, kLocked));
    if (!mnt.valid()) {
        int err = errno;
        std::string msg = base::sys_error("mounting a fresh /sys for the sandbox's network", err).message;
        if (err == EPERM)
            msg +=
                "; the host's /sys is partly covered (as in some containers), so the kernel refuses a new one "
                "and the host's would show its network devices: use --network host to keep the host's /sys, or a "
                "container started with an unmasked /sys (docker: --security-opt systempaths=unconfined)";
        return base::error(msg);
    }
    return mnt;
}

base::Result<base::Fd> clone_cgroup() {
    struct stat sys, cg;
    if (::stat("/sys", &sys) != 0 || ::stat("/sys/fs/cgroup", &cg) != 0 || cg.st_dev == sys.st_dev) return base::Fd();
    base::Fd c(::open_tree(AT_FDCWD, "/sys/fs/cgroup", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
    if (!c.valid()) return base::sys_error("cloning mount /sys/fs/cgroup");
    struct mount_attr attr = {};
    attr.attr_set = kLocked;
    if (::mount_setattr(c.get(), "", AT_EMPTY_PATH | AT_RECURSIVE, &attr, sizeof attr) != 0)
        return base::sys_error("making the clone of /sys/fs/cgroup read-only");
    return c;
}

}  // namespace

base::Result<OwnSys> make_own_sys() {
    OwnSys s;
    TRY(s.sysfs, make_sysfs());
    TRY(s.cgroup, clone_cgroup());
    return s;
}

base::Result<void> attach_own_sys(OwnSys sys) {
    if (::move_mount(sys.sysfs.get(), "", AT_FDCWD, "/sys", MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return base::sys_error("mounting the fresh /sys");
    if (sys.cgroup.valid() &&
        ::move_mount(sys.cgroup.get(), "", AT_FDCWD, "/sys/fs/cgroup", MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return base::sys_error("re-attaching /sys/fs/cgroup on the fresh /sys");
    return base::Ok();
}

}  // namespace overlay
