// The session's write generation (helper/store/session/session.h, read_gen).
#include <fcntl.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>

#include "helper/store/session/session.h"

namespace session {

namespace {

const char kGenXattr[] = "user.layover.gen";

// The stored value; ENODATA when there is none.
std::optional<uint64_t> get(int dirfd) {
    char buf[24];
    ssize_t n = ::fgetxattr(dirfd, kGenXattr, buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(buf, buf + n, v);
    if (ec != std::errc() || end != buf + n) {
        errno = EINVAL;
        return std::nullopt;
    }
    return v;
}

}  // namespace

std::optional<uint64_t> read_gen(int dirfd) {
    if (auto v = get(dirfd)) return v;
    if (errno != ENODATA) return std::nullopt;
    // A session of an older version: 0, unless a writer made it meanwhile.
    if (::fsetxattr(dirfd, kGenXattr, "0", 1, XATTR_CREATE) != 0 && errno != EEXIST) return std::nullopt;
    return get(dirfd);
}

base::Result<void> bump_gen(int dirfd, const std::string& name, const std::string& dir) {
    auto v = get(dirfd);
    bool garbled = !v && errno != ENODATA;
    // A value not ours: no snapshot taken under it may stay.
    for (const char* f : kStatusSnapshotFiles)
        if (garbled && ::unlinkat(dirfd, f, 0) != 0 && errno != ENOENT)
            return base::sys_error("session '" + name +
                                   "': cannot drop its status snapshot; remove status-snapshot* from the session dir");
    std::string next = std::to_string(v.value_or(0) + 1);
    if (::fsetxattr(dirfd, kGenXattr, next.data(), next.size(), 0) == 0) return base::Ok();
    int err = errno;
    // No xattrs on this file system: read_gen fails as well, so no status
    // snapshot is ever trusted here.
    if (err == ENOTSUP || err == EOPNOTSUPP) return base::Ok();
    // A user xattr needs write permission on the dir: a session dir made read-only.
    if (err == EACCES || err == EPERM)
        return base::error("session '" + name + "': its dir is not writable, so no write can be recorded; chmod u+w " +
                           dir);
    return base::sys_error("session '" + name +
                               "': cannot record a write (xattr user.layover.gen of the session dir); free space "
                               "on the state dir's file system",
                           err);
}

}  // namespace session
