#include "helper/store/records/usage.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace session {

namespace {

void walk(int dirfd, int depth, Usage* u) {
    DIR* d = ::fdopendir(dirfd);
    if (!d) {
        ::close(dirfd);
        u->complete = false;
        return;
    }
    while (dirent* e = ::readdir(d)) {
        const char* n = e->d_name;
        if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]))) continue;
        struct stat st;
        if (::fstatat(::dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // gone (or replaced) meanwhile
        u->bytes += static_cast<uint64_t>(st.st_blocks) * 512;
        if (!S_ISDIR(st.st_mode)) {
            u->entries++;
            continue;
        }
        if (depth + 1 >= kMaxUsageDepth) {
            u->complete = false;
            continue;
        }
        int sub = ::openat(::dirfd(d), n, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) walk(sub, depth + 1, u);
        else if (errno != ENOENT && errno != ENOTDIR && errno != ELOOP) u->complete = false;  // EMFILE, ENOMEM
    }
    ::closedir(d);
}

}  // namespace

Usage tree_usage(int dirfd) {
    Usage u;
    walk(dirfd, 0, &u);
    return u;
}

}  // namespace session
