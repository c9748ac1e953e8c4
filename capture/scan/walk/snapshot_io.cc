// The status snapshot's file and its check against the trees
// (capture/scan/caches/snapshot.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#include "capture/scan/caches/snapshot.h"
#include "capture/scan/walk/walker.h"
#include "helper/base/fd.h"
#include "helper/base/thread.h"
#include "helper/store/session/session.h"

namespace capture {

namespace {

constexpr size_t kMaxFile = 512u << 20;  // a snapshot bigger than this is not read

// One key: the same stat, or still absent. `name`: its last component,
// in `dirfd`.
bool holds(int dirfd, const char* name, const PathKey& k) {
    StatKey now;
    if (!stat_key_at(dirfd, name, &now)) return k.absent && errno == ENOENT;
    return !k.absent && now == k.key;
}

// Keys in walk order, each stat'ed in its parent dir, opened once for its
// run of siblings (a path lookup of one component each, not of the whole
// path). A parent that cannot be opened: the key by its whole path.
class Holds {
public:
    explicit Holds(int root) : root_(root) {}
    bool operator()(const PathKey& k) {
        size_t slash = k.path.rfind('/');
        if (slash == std::string::npos) return holds(root_, k.path.c_str(), k);
        std::string_view parent(k.path.data(), slash);
        if (parent != parent_) {
            parent_.assign(parent);
            dir_.reset(::openat(root_, parent_.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        }
        return dir_.valid() ? holds(dir_.get(), k.path.c_str() + slash + 1, k) : holds(root_, k.path.c_str(), k);
    }

private:
    int root_;
    std::string parent_ = "/";  // none yet
    base::Fd dir_;
};

}  // namespace

bool stat_key_at(int dirfd, const char* name, StatKey* out) {
    struct statx st;
    int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (name[0] ? 0 : AT_EMPTY_PATH);
    if (::statx(dirfd, name, flags, kKeyMask, &st) != 0) return false;
    if ((st.stx_mask & kKeyMask) != kKeyMask) {
        errno = EOPNOTSUPP;
        return false;
    }
    *out = stat_key(st);
    return true;
}

bool load_snapshot(int session_dirfd, bool full, StatusSnapshot* out) {
    auto data = read_session_cache(session_dirfd, session::kStatusSnapshotFiles[full ? 1 : 0], kMaxFile);
    return data && parse_snapshot(*data, out);
}

base::Result<void> store_snapshot(int session_dirfd, bool full, const std::string& data) {
    return write_session_cache(session_dirfd, session::kStatusSnapshotFiles[full ? 1 : 0], data,
                               "writing the status snapshot");
}

bool snapshot_keys_hold(const SnapshotKeys& k, int upper_fd, int target_fd, int threads) {
    Holds dirs(upper_fd);
    for (const auto& d : k.dirs)
        if (!dirs(d)) return false;
    // The real keys in two halves, one on a second thread: each statx is a
    // path lookup, most of this path's CPU.
    std::atomic<bool> ok{true};
    auto span = [&](size_t from, size_t to) {
        Holds real(target_fd);
        for (size_t i = from; i < to && ok.load(std::memory_order_relaxed); i++)
            if (!real(k.real[i])) ok = false;
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
