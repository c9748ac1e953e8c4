#include "helper/sandbox/spare.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "helper/store/remove.h"

std::string spare_dir(const std::string& state) { return state + "/spare"; }

void mark_top_dir(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return;
    int flags = 0;
    if (::ioctl(fd, FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL)) {
        flags |= FS_TOPDIR_FL;
        (void)::ioctl(fd, FS_IOC_SETFLAGS, &flags);
    }
    ::close(fd);
}

namespace {

// A remover killed while it made its spare leaves STATE/spare/tmp.PID:
// removed once no process has that pid (a reused pid only postpones it).
void drop_stale(const std::string& parent) {
    DIR* d = ::opendir(parent.c_str());
    if (!d) return;
    while (struct dirent* e = ::readdir(d)) {
        if (std::strncmp(e->d_name, "tmp.", 4) != 0) continue;
        char* end = nullptr;
        long pid = std::strtol(e->d_name + 4, &end, 10);
        if (pid <= 0 || *end || pid == ::getpid()) continue;
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) (void)remove_tree_fast(parent + "/" + e->d_name);
    }
    ::closedir(d);
}

}  // namespace

void make_spare(const std::string& state, bool scratch) {
    std::string parent = spare_dir(state), next = parent + "/next";
    drop_stale(parent);
    struct stat st;
    if (::lstat(next.c_str(), &st) == 0) return;
    if (::mkdir(parent.c_str(), 0700) == 0) mark_top_dir(parent);  // placed as session dirs are
    else if (errno != EEXIST) return;
    std::string tmp = parent + "/tmp." + std::to_string(::getpid());
    if (::mkdir(tmp.c_str(), 0700) != 0) return;
    const char* dirs[] = {"upper", "work", "steps", "outside", "outside/0", "outside/0/upper", "outside/0/work"};
    const mode_t modes[] = {0755, 0700, 0700, 0700, 0700, 0755, 0700};
    size_t n = scratch ? 7 : 3, made = 0;
    while (made < n && ::mkdir((tmp + "/" + dirs[made]).c_str(), modes[made]) == 0) made++;
    if (made == n && ::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, next.c_str(), RENAME_NOREPLACE) == 0) return;
    while (made > 0) ::rmdir((tmp + "/" + dirs[--made]).c_str());
    ::rmdir(tmp.c_str());
}

bool take_spare(const std::string& state, const std::string& dir) {
    std::string next = spare_dir(state) + "/next";
    return ::renameat2(AT_FDCWD, next.c_str(), AT_FDCWD, dir.c_str(), RENAME_NOREPLACE) == 0;
}
