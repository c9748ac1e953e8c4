#include "overlay/tmpfs.h"

#include <sys/mount.h>

namespace overlay {

base::Result<base::Fd> detached_tmpfs(const char* size, size_t inodes, const std::string& what) {
    std::string n = std::to_string(inodes);
    base::Fd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
    if (!fs.valid() || ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "mode", "0755", 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "size", size, 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "nr_inodes", n.c_str(), 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        return base::sys_error(what);
    base::Fd m(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC));
    if (!m.valid()) return base::sys_error(what);
    return m;
}

base::Result<void> make_read_only(const base::Fd& mount, const std::string& what) {
    struct mount_attr attr = {};
    attr.attr_set = MOUNT_ATTR_RDONLY;
    if (::mount_setattr(mount.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) return base::sys_error(what);
    return base::Ok();
}

}  // namespace overlay
