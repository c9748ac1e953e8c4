// Step 7b of the mount plan: hidden paths (overlay/mounts.h).
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <linux/openat2.h>

#include "helper/base/cat.h"
#include "overlay/mountinfo.h"
#include "overlay/mounts.h"
#include "overlay/tmpfs.h"

namespace overlay {

namespace {

// The source every hidden file is bound from: an empty file on /dev, the
// sandbox's own tmpfs (read-only once make_rest_readonly has run).
const char kEmptyFile[] = "/dev/.layover-hidden";

base::Result<void> make_empty_file() {
    int fd = ::open(kEmptyFile, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0444);
    if (fd < 0 && errno != EEXIST) return base::sys_error(base::cat({"creating ", kEmptyFile}));
    if (fd >= 0) ::close(fd);
    return base::Ok();
}

}  // namespace

base::Result<void> hide_paths(const MountPlan& plan) {
    bool have_empty = false;
    const unsigned long ro = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
    for (const auto& path : plan.hide) {
        // What the namespace shows there now (the overlay's view, for a path
        // in the target). Absent, or neither a dir nor a file: nothing to read.
        struct open_how how = {};
        how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
        how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        int fd = static_cast<int>(::syscall(SYS_openat2, AT_FDCWD, path.c_str(), &how, sizeof how));
        if (fd < 0) continue;
        base::Fd at(fd);
        struct stat st;
        if (::fstat(at.get(), &st) != 0) return base::sys_error("hiding " + path);
        std::string where = "/proc/self/fd/" + std::to_string(at.get());
        if (S_ISDIR(st.st_mode)) {
            if (::mount("tmpfs", where.c_str(), "tmpfs", ro, "mode=0755,size=4k,nr_inodes=16") != 0)
                return base::sys_error("hiding " + path);
        } else if (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode)) {  // a socket: connect() then finds a file
            if (!have_empty) TRY_VOID(make_empty_file());
            have_empty = true;
            // A read-only clone of the empty file, moved onto the open file.
            base::Fd clone(::open_tree(AT_FDCWD, kEmptyFile, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
            struct mount_attr attr = {};
            attr.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
            if (!clone.valid() || ::mount_setattr(clone.get(), "", AT_EMPTY_PATH, &attr, sizeof attr) != 0 ||
                ::move_mount(clone.get(), "", at.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
                return base::sys_error("hiding " + path);
        }
    }
    return base::Ok();
}

}  // namespace overlay

namespace overlay {

namespace {

// An empty tmpfs, or one holding the empty file `file`, read-only.
base::Result<base::Fd> small_tmpfs(const char* file) {
    TRY(base::Fd m, detached_tmpfs("4k", 16, "a tmpfs to cover a hidden path"));
    if (file) {
        int fd = ::openat(m.get(), file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0444);
        if (fd < 0) return base::sys_error("an empty file to cover a hidden path");
        ::close(fd);
    }
    TRY_VOID(make_read_only(m, "a tmpfs to cover a hidden path"));
    return m;
}

}  // namespace

base::Result<void> hide_paths_beneath(int root, const std::string& root_path, const std::vector<std::string>& hide) {
    for (const auto& path : hide) {
        if (!path_within(path, root_path) || path == root_path) continue;
        std::string rel = path.substr(root_path.size() + 1);
        struct open_how how = {};
        how.flags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
        how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
        // EAGAIN: a scoped lookup through ".." raced a rename or a mount
        // somewhere on the machine (openat2(2)): retried, never taken for
        // "absent" (the path would stay unhidden).
        int fd = -1;
        for (int tries = 0; tries < 4096; tries++) {
            fd = static_cast<int>(::syscall(SYS_openat2, root, rel.c_str(), &how, sizeof how));
            if (fd >= 0 || (errno != EAGAIN && errno != EINTR)) break;
        }
        if (fd < 0 && (errno == EAGAIN || errno == EINTR)) return base::sys_error("hiding " + path);
        if (fd < 0) continue;
        base::Fd at(fd);
        struct stat st;
        if (::fstat(at.get(), &st) != 0) return base::sys_error("hiding " + path);
        base::Fd cover;
        if (S_ISDIR(st.st_mode)) {
            TRY(cover, small_tmpfs(nullptr));
        } else if (S_ISREG(st.st_mode) || S_ISSOCK(st.st_mode)) {
            TRY(base::Fd t, small_tmpfs("e"));
            cover = base::Fd(::open_tree(t.get(), "e", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
            if (!cover.valid()) return base::sys_error("hiding " + path);
        } else {
            continue;
        }
        if (::move_mount(cover.get(), "", at.get(), "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) != 0)
            return base::sys_error("hiding " + path);
    }
    return base::Ok();
}

}  // namespace overlay
