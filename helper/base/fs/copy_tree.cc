#include "helper/base/fs/copy_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"

namespace base {

namespace {

thread_local int g_errno = 0;

Result<void> fail(const std::string& what, int err = errno) {
    g_errno = err;
    return sys_error(what, err);
}

void copy_xattrs(int from, int to) {
    char names[4096];
    ssize_t n = ::flistxattr(from, names, sizeof names);
    for (ssize_t i = 0; i > -1 && i < n; i += static_cast<ssize_t>(std::strlen(names + i)) + 1) {
        const char* name = names + i;
        // Only the user namespace, and never overlayfs's own markers.
        if (std::strncmp(name, "user.", 5) != 0 || std::strncmp(name, "user.overlay.", 13) == 0) continue;
        char value[65536];
        ssize_t len = ::fgetxattr(from, name, value, sizeof value);
        if (len >= 0) ::fsetxattr(to, name, value, static_cast<size_t>(len), 0);
    }
}

Result<void> copy_file(int from, int to_dir, const std::string& to, const struct stat& st) {
    Fd out(::openat(to_dir, to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!out.valid()) return fail("create " + to);
    for (;;) {
        ssize_t n = ::copy_file_range(from, nullptr, out.get(), nullptr, 1 << 30, 0);
        if (n == 0) break;
        if (n > 0) continue;
        if (errno != EXDEV && errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP) return fail("copy " + to);
        char buf[1 << 16];  // a filesystem pair copy_file_range cannot serve: read and write
        ssize_t r;
        while ((r = ::read(from, buf, sizeof buf)) > 0)
            if (::write(out.get(), buf, static_cast<size_t>(r)) != r) return fail("write " + to);
        if (r < 0) return fail("read " + to);
        break;
    }
    copy_xattrs(from, out.get());
    ::fchmod(out.get(), st.st_mode & 07777 & ~06000);
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    ::futimens(out.get(), t);
    return Ok();
}

Result<void> copy_entry(int from_dir, const std::string& from, int to_dir, const std::string& to) {
    struct stat st;
    if (::fstatat(from_dir, from.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return fail("stat " + from);
    // By mount id (st_dev of an overlay's files is their layer's): a mount
    // below, such as a hidden path, cannot move and must not be copied.
    if (!S_ISLNK(st.st_mode)) {
        auto other = review::crosses_mount_at(from_dir, from);
        if (!other || other.value()) return fail(from + " is another mount", EXDEV);
    }
    struct timespec t[2] = {st.st_atim, st.st_mtim};
    if (S_ISLNK(st.st_mode)) {
        std::vector<char> target(static_cast<size_t>(st.st_size) + 2);
        ssize_t n = ::readlinkat(from_dir, from.c_str(), target.data(), target.size() - 1);
        if (n < 0) return fail("readlink " + from);
        target[static_cast<size_t>(n)] = '\0';
        if (::symlinkat(target.data(), to_dir, to.c_str()) != 0) return fail("symlink " + to);
        ::utimensat(to_dir, to.c_str(), t, AT_SYMLINK_NOFOLLOW);
        return Ok();
    }
    if (S_ISFIFO(st.st_mode)) {
        if (::mkfifoat(to_dir, to.c_str(), st.st_mode & 0777) != 0) return fail("mkfifo " + to);
        return Ok();
    }
    if (S_ISREG(st.st_mode)) {
        Fd in(::openat(from_dir, from.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
        if (!in.valid()) return fail("open " + from);
        return copy_file(in.get(), to_dir, to, st);
    }
    if (!S_ISDIR(st.st_mode)) return fail(from + " is a device or socket", EXDEV);
    Fd in(::openat(from_dir, from.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!in.valid()) return fail("open " + from);
    if (::mkdirat(to_dir, to.c_str(), 0700) != 0) return fail("mkdir " + to);
    Fd out(::openat(to_dir, to.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!out.valid()) return fail("open " + to);
    auto names = list_dir(in.get());
    if (!names) return fail("list " + from);
    for (const auto& e : names.value()) TRY_VOID(copy_entry(in.get(), e.name, out.get(), e.name));
    copy_xattrs(in.get(), out.get());
    ::fchmod(out.get(), st.st_mode & 07777 & ~06000);
    ::futimens(out.get(), t);
    return Ok();
}

}  // namespace

Result<void> copy_tree(int from_dir, const std::string& from, int to_dir, const std::string& to) {
    g_errno = 0;
    auto r = copy_entry(from_dir, from, to_dir, to);
    if (!r) {
        int keep = g_errno;
        (void)review::remove_tree_at(to_dir, to);
        g_errno = keep;
    }
    return r;
}

int last_copy_errno() { return g_errno; }

}  // namespace base
