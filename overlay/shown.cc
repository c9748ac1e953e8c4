// Step 7a of the mount plan: --ro and --rw host paths (overlay/mounts.h).
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "overlay/mounts.h"

namespace overlay {

namespace {

// The mount point for a clone at `path`: a private tmpfs (/tmp, /run...) no
// longer has the host's entry, so make one of the clone's type.
base::Result<void> make_mount_point(const std::string& path, bool dir) {
    for (size_t pos = 1; pos < path.size();) {
        size_t next = path.find('/', pos);
        if (next == std::string::npos) break;
        std::string parent = path.substr(0, next);
        if (::mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) return base::sys_error("creating " + parent);
        pos = next + 1;
    }
    struct stat st;
    if (::lstat(path.c_str(), &st) == 0) return base::Ok();
    int rc = dir ? ::mkdir(path.c_str(), 0755)
                 : ::close(::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (rc != 0) return base::sys_error("creating the mount point " + path);
    return base::Ok();
}

}  // namespace

base::Result<void> attach_shown(const MountPlan& plan, Handles& h) {
    (void)plan;
    for (auto& [path, clone] : h.shown) {
        struct stat st;
        if (::fstat(clone.get(), &st) != 0) return base::sys_error("showing " + path);
        TRY_VOID(make_mount_point(path, S_ISDIR(st.st_mode)));
        if (::move_mount(clone.get(), "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            return base::sys_error("showing " + path + " inside");
        clone.reset();
    }
    return base::Ok();
}

}  // namespace overlay
