#include "overlay/devfs.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace overlay {

const char* const kDevNodes[] = {"null", "zero", "full", "random", "urandom", "tty", nullptr};

base::Result<void> build_dev(const MountPlan& /*plan*/, Handles& h) {
    // nosuid,noexec: nothing in /dev needs either.
    if (::mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=1m") != 0)
        return base::sys_error("mounting a private /dev");
    for (auto& [name, clone] : h.dev_nodes) {
        std::string path = "/dev/" + name;
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) return base::sys_error("creating " + path);
        ::close(fd);
        if (::move_mount(clone.get(), "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            return base::sys_error("binding host " + path);
        clone.reset();
    }
    if (::mkdir("/dev/pts", 0755) != 0) return base::sys_error("creating /dev/pts");
    // newinstance: the host's ptys (the user's other terminals) stay invisible.
    if (::mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=620") != 0)
        return base::sys_error("mounting a private /dev/pts");
    struct Link {
        const char* target;
        const char* path;
    };
    const Link links[] = {{"pts/ptmx", "/dev/ptmx"},
                          {"/proc/self/fd", "/dev/fd"},
                          {"/proc/self/fd/0", "/dev/stdin"},
                          {"/proc/self/fd/1", "/dev/stdout"},
                          {"/proc/self/fd/2", "/dev/stderr"}};
    for (const auto& l : links)
        if (::symlink(l.target, l.path) != 0) return base::sys_error(std::string("creating ") + l.path);
    if (::mkdir("/dev/shm", 01777) != 0) return base::sys_error("creating /dev/shm");
    // A dir of the private /tmp's tmpfs: the three share --tmp-size (mounts.h).
    return bind_private_tmp(h, "shm", "/dev/shm");
}

}  // namespace overlay
