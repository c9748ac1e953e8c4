#include "helper/store/remove.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "helper/store/session.h"

namespace {

// Empty the directory open at fd (which we own), depth first.
bool empty_dir(int fd, dev_t dev, int depth) {
    if (depth > 4096) return false;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return false;
    }
    bool ok = true;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        struct stat st;
        if (::fstatat(::dirfd(d), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            ok = false;
            continue;
        }
        if (S_ISDIR(st.st_mode)) {
            if (st.st_dev != dev) {
                ok = false;
                continue;
            }
            if ((st.st_mode & 0700) != 0700) ::fchmodat(::dirfd(d), n.c_str(), 0700, 0);
            int sub = ::openat(::dirfd(d), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub < 0 || !empty_dir(sub, dev, depth + 1)) ok = false;
            if (::unlinkat(::dirfd(d), n.c_str(), AT_REMOVEDIR) != 0) ok = false;
        } else if (::unlinkat(::dirfd(d), n.c_str(), 0) != 0) {
            ok = false;
        }
    }
    ::closedir(d);
    return ok;
}

}  // namespace

base::Result<void> remove_tree_fast(const std::string& path) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno == ENOENT) return base::Ok();
        return base::sys_error("removing " + path);
    }
    if (!S_ISDIR(st.st_mode)) {
        if (::unlink(path.c_str()) != 0) return base::sys_error("removing " + path);
        return base::Ok();
    }
    if ((st.st_mode & 0700) != 0700) ::chmod(path.c_str(), 0700);
    int fd = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && empty_dir(fd, st.st_dev, 0) && ::rmdir(path.c_str()) == 0) return base::Ok();
    // Entries we do not own (or cannot chmod): retry with full access inside
    // an owner user namespace.
    return session::remove_tree(path);
}
