#include "helper/sandbox/prepare/spare.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <signal.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/store/session/remove.h"

std::string spare_dir(const std::string& state) { return state + "/spare"; }

void mark_top_dir(const std::string& dir) {
    base::Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    int flags = 0;
    if (fd.valid() && ::ioctl(fd.get(), FS_IOC_GETFLAGS, &flags) == 0 && !(flags & FS_TOPDIR_FL)) {
        flags |= FS_TOPDIR_FL;
        (void)::ioctl(fd.get(), FS_IOC_SETFLAGS, &flags);
    }
}

namespace {

// A remover killed while it made its spare leaves STATE/spare/tmp.PID:
// removed once no process has that pid (a reused pid only postpones it).
void drop_stale(const std::string& parent) {
    base::Fd d(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!d.valid()) return;
    auto names = base::list_dir(d.get());
    if (!names) return;
    for (const auto& e : *names) {
        if (e.name.compare(0, 4, "tmp.") != 0) continue;
        char* end = nullptr;
        long pid = std::strtol(e.name.c_str() + 4, &end, 10);
        if (pid <= 0 || *end || pid == ::getpid()) continue;
        if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) (void)remove_tree_fast(parent + "/" + e.name);
    }
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
