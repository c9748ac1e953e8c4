#include "capture/scan/walk/session_snapshot.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>

#include "capture/scan/walk/walker.h"

namespace capture {

namespace {

void add(std::string* out, const std::string& s) {
    *out += std::to_string(s.size());
    *out += ':';
    *out += s;
}

PathKey key_at(int dirfd, const char* name) {
    PathKey k{name, true, {}};
    if (stat_key_at(dirfd, name, &k.key)) {
        k.absent = false;
    } else if (errno != ENOENT) {
        k.key.ino = ~uint64_t{0};  // unreadable: a key no stat gives
        k.key.ctime_ns = -1;
    }
    return k;
}

void add_key(std::string* out, const PathKey& k) {
    add(out, k.path);
    *out += k.absent ? "absent"
                     : std::to_string(k.key.dev) + "," + std::to_string(k.key.ino) + "," + std::to_string(k.key.size) +
                           "," + std::to_string(k.key.mtime_ns) + "," + std::to_string(k.key.ctime_ns);
    *out += ';';
}

// This boot's id: neither the generation's xattr nor the snapshot is
// fsync'ed, so after a crash a writer's bump may be lost while its writes
// are not; a snapshot of an earlier boot is never trusted.
std::string boot_id() {
    char buf[64];
    int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : ::read(fd, buf, sizeof buf);
    if (fd >= 0) ::close(fd);
    if (n > 0) return std::string(buf, static_cast<size_t>(n));
    // Unknown: a value no later status repeats, so no snapshot matches.
    struct timespec now {};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return "unknown " + std::to_string(::getpid()) + " " + std::to_string(now.tv_sec) + "." +
           std::to_string(now.tv_nsec);
}

}  // namespace

std::string status_inputs(const session::Info& s, bool summary_only, const IgnoreOptions& ignore, int session_dirfd) {
    // The version: a later one may classify the same trees otherwise.
    std::string out = std::string(LAYOVER_VERSION) + (summary_only ? ";summary;" : ";full;");
    out += ignore.include_ignored ? "include-ignored;" : "-;";
    out += ignore.no_defaults ? "no-defaults;" : "-;";
    for (const auto& g : ignore.globs) add(&out, g);
    out += "|home:";
    const char* home = std::getenv("HOME");  // the default ignore lines' anchor
    add(&out, home ? home : "");
    out += "|boot:";
    add(&out, boot_id());
    out += "|target:";
    add(&out, s.meta.target);
    out += "|created:" + std::to_string(s.meta.created_ns) + "|hidden:";
    for (const auto& h : s.meta.hidden) add(&out, h);
    out += "|files:";
    add_key(&out, key_at(session_dirfd, "meta.json"));
    add_key(&out, key_at(session_dirfd, "known-bases.json"));
    return out;
}

PathKey ignore_file_key(int target_fd) { return key_at(target_fd, kIgnoreFile); }

PathKey upper_root_key(int upper_fd) { return key_at(upper_fd, ""); }

}  // namespace capture
