#include "helper/base/dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace base {

bool is_real_dir(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

Result<std::vector<DirEntry>> list_dir(int dirfd) {
    // closedir() closes the fd it was given: work on a dup, and rewind it,
    // since a dup shares the caller's file offset.
    int dup = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) return sys_error("dup");
    DIR* d = ::fdopendir(dup);
    if (!d) {
        int err = errno;
        ::close(dup);
        return sys_error("opendir", err);
    }
    ::rewinddir(d);
    std::vector<DirEntry> names;
    errno = 0;
    while (dirent* e = ::readdir(d)) {
        const char* n = e->d_name;
        if (n[0] == '.' && (n[1] == '\0' || (n[1] == '.' && n[2] == '\0'))) continue;
        names.push_back({n, e->d_type});
    }
    int err = errno;
    ::closedir(d);
    if (err) return sys_error("readdir", err);
    std::sort(names.begin(), names.end());
    return names;
}

size_t split_by_subdirs(const std::vector<DirEntry>& names) {
    size_t dirs = 0;
    for (const auto& e : names) dirs += e.type == DT_DIR;
    if (dirs < 2) return 0;
    size_t seen = 0;
    for (size_t i = 0; i < names.size(); i++)
        if (names[i].type == DT_DIR && ++seen > dirs / 2) return i;
    return 0;
}

std::vector<size_t> split_by_subdirs(const std::vector<DirEntry>& names, size_t parts) {
    size_t dirs = 0;
    for (const auto& e : names) dirs += e.type == DT_DIR;
    std::vector<size_t> at;
    if (dirs < 2 || parts < 2) return at;
    parts = std::min(parts, dirs);
    size_t seen = 0;  // subdirs before names[i]
    for (size_t i = 0; i < names.size() && at.size() + 1 < parts; i++) {
        if (names[i].type != DT_DIR) continue;
        if (seen > 0 && seen == (at.size() + 1) * dirs / parts) at.push_back(i);
        seen++;
    }
    return at;
}

}  // namespace base
