// The status snapshot's file and its check against the trees
// (capture/scan/snapshot.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <random>

#include "capture/scan/snapshot.h"
#include "capture/scan/walker.h"
#include "helper/base/fd.h"
#include "helper/base/thread.h"
#include "helper/store/session.h"

namespace capture {

namespace {

constexpr size_t kMaxFile = 512u << 20;  // a snapshot bigger than this is not read

// One key: the same stat, or still absent.
bool holds(int dirfd, const PathKey& k) {
    struct statx st;
    const char* p = k.path.empty() ? "" : k.path.c_str();
    int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (k.path.empty() ? AT_EMPTY_PATH : 0);
    if (::statx(dirfd, p, flags, kKeyMask, &st) != 0) return k.absent && errno == ENOENT;
    return !k.absent && (st.stx_mask & kKeyMask) == kKeyMask && stat_key(st) == k.key;
}

}  // namespace

bool load_snapshot(int session_dirfd, bool full, StatusSnapshot* out) {
    const char* name = session::kStatusSnapshotFiles[full ? 1 : 0];
    base::Fd fd(::openat(session_dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    if (!fd.valid()) return false;
    struct stat st;
    if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) return false;
    if (static_cast<uint64_t>(st.st_size) > kMaxFile) return false;
    // Replaced by rename, never rewritten in place: one read of the size fstat gave.
    std::string data = base::read_upto(fd.get(), static_cast<size_t>(st.st_size));
    return parse_snapshot(data, out);
}

base::Result<void> store_snapshot(int session_dirfd, bool full, const std::string& data) {
    const char* name = session::kStatusSnapshotFiles[full ? 1 : 0];
    std::random_device rd;
    std::string tmp = std::string(".") + name + "-" + std::to_string(rd() % 1000000000u);
    base::Fd fd(::openat(session_dirfd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!fd.valid()) return base::sys_error("writing the status snapshot");
    auto w = base::write_all(fd.get(), data.data(), data.size());
    fd.reset();
    // No fsync: a snapshot lost in a crash is recomputed; a torn one fails to parse.
    if (!w || ::renameat(session_dirfd, tmp.c_str(), session_dirfd, name) != 0) {
        ::unlinkat(session_dirfd, tmp.c_str(), 0);
        return w ? base::sys_error("writing the status snapshot") : w;
    }
    return base::Ok();
}

bool snapshot_keys_hold(const SnapshotKeys& k, int upper_fd, int target_fd, int threads) {
    for (const auto& d : k.dirs)
        if (!holds(upper_fd, d)) return false;
    // The real keys in two halves, one on a second thread: each statx is a
    // path lookup, most of this path's CPU.
    std::atomic<bool> ok{true};
    auto span = [&](size_t from, size_t to) {
        for (size_t i = from; i < to && ok.load(std::memory_order_relaxed); i++)
            if (!holds(target_fd, k.real[i])) ok = false;
    };
    size_t n = k.real.size();
    if (threads < 2 || n < 256) {
        span(0, n);
        return ok;
    }
    size_t half = n / 2;
    base::run_halves(
        [&] {
            span(0, half);
            return true;
        },
        [&] { span(half, n); });
    return ok;
}

}  // namespace capture
