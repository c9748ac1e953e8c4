#include "review/txn/fsops.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <iterator>
#include <vector>

#include "helper/base/clock.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"

namespace review {

capture::Type type_of_mode(uint32_t m) {
    using capture::Type;
    if (S_ISREG(m)) return Type::File;
    if (S_ISDIR(m)) return Type::Dir;
    if (S_ISLNK(m)) return Type::Symlink;
    if (S_ISFIFO(m)) return Type::Fifo;
    if (S_ISSOCK(m)) return Type::Socket;
    return Type::Other;
}

int64_t ns_of(const struct timespec& ts) { return base::time_ns(ts.tv_sec, ts.tv_nsec); }

struct timespec timespec_of(int64_t ns) {
    // Floor division: times before 1970 keep 0 <= tv_nsec < 1e9.
    int64_t sec = ns / 1000000000, rem = ns % 1000000000;
    if (rem < 0) {
        sec -= 1;
        rem += 1000000000;
    }
    struct timespec ts {};
    ts.tv_sec = static_cast<time_t>(sec);
    ts.tv_nsec = static_cast<long>(rem);
    return ts;
}

EntryStat entry_stat(const struct stat& st, const std::string& path) {
    EntryStat s;
    s.path = path;
    s.exists = true;
    s.type = type_of_mode(st.st_mode);
    s.mode = st.st_mode & 07777;
    s.ino = st.st_ino;
    s.size = static_cast<uint64_t>(st.st_size);
    s.mtime_ns = ns_of(st.st_mtim);
    s.ctime_ns = ns_of(st.st_ctim);
    return s;
}

base::Result<EntryStat> stat_at(int dirfd, const std::string& name) {
    struct stat st {};
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) {
            EntryStat s;
            s.path = name;
            return s;
        }
        return base::sys_error("stat " + name);
    }
    return entry_stat(st, name);
}

namespace {

// The fd-based xattr and attribute calls refuse O_PATH fds (EBADF); those go
// through /proc/self/fd/N, whose magic link the non-l calls follow. Trying
// the fd first saves a path walk through /proc per call.
ssize_t list_x(int fd, char* buf, size_t size) {
    ssize_t n = ::flistxattr(fd, buf, size);
    if (n < 0 && errno == EBADF) n = ::listxattr(proc_fd_path(fd).c_str(), buf, size);
    return n;
}

ssize_t get_x(int fd, const char* name, void* buf, size_t size) {
    ssize_t n = ::fgetxattr(fd, name, buf, size);
    if (n < 0 && errno == EBADF) n = ::getxattr(proc_fd_path(fd).c_str(), name, buf, size);
    return n;
}

int set_x(int fd, const char* name, const void* val, size_t size) {
    int rc = ::fsetxattr(fd, name, val, size, 0);
    if (rc != 0 && errno == EBADF) rc = ::setxattr(proc_fd_path(fd).c_str(), name, val, size, 0);
    return rc;
}

int remove_x(int fd, const char* name) {
    int rc = ::fremovexattr(fd, name);
    if (rc != 0 && errno == EBADF) rc = ::removexattr(proc_fd_path(fd).c_str(), name);
    return rc;
}

}  // namespace

base::Result<std::map<std::string, std::string>> get_user_xattrs(int fd) {
    std::map<std::string, std::string> out;
    ssize_t n = list_x(fd, nullptr, 0);
    if (n < 0) {
        if (errno == ENOTSUP) return out;
        return base::sys_error("list xattrs");
    }
    if (n == 0) return out;
    std::vector<char> names(static_cast<size_t>(n) + 1);
    n = list_x(fd, names.data(), names.size());
    if (n < 0) return base::sys_error("list xattrs");
    for (ssize_t i = 0; i < n;) {
        std::string name(&names[static_cast<size_t>(i)]);
        i += static_cast<ssize_t>(name.size()) + 1;
        if (name.rfind("user.", 0) != 0) continue;
        ssize_t len = get_x(fd, name.c_str(), nullptr, 0);
        if (len < 0) continue;
        std::string val(static_cast<size_t>(len), '\0');
        len = get_x(fd, name.c_str(), val.data(), val.size());
        if (len < 0) continue;
        val.resize(static_cast<size_t>(len));
        out[name] = val;
    }
    return out;
}

base::Result<void> set_user_xattrs(int fd, const std::map<std::string, std::string>& want, bool fresh) {
    std::map<std::string, std::string> have;
    if (!fresh) {
        TRY(have, get_user_xattrs(fd));
    }
    for (const auto& [k, v] : have)
        if (!want.count(k) && remove_x(fd, k.c_str()) != 0 && errno != ENODATA)
            return base::sys_error("remove xattr " + base::display_path(k));
    for (const auto& [k, v] : want) {
        // Only user.* ever: security.*, trusted.* and system.* are refused here too.
        if (k.rfind("user.", 0) != 0)
            return base::error("refusing to set xattr " + base::display_path(k) + " (only user.* are applied)");
        auto it = have.find(k);
        if (it != have.end() && it->second == v) continue;
        if (set_x(fd, k.c_str(), v.data(), v.size()) == 0) continue;
        int err = errno;
        std::string what = "set xattr " + base::display_path(k) + " (" + base::thousands(v.size()) + " bytes)";
        // Within Linux's limits (the reader checked) but past the filesystem's
        // room for one file's xattrs: not a full disk, so not ENOSPC's usual note.
        if (err == ENOSPC || err == E2BIG || err == ERANGE)
            return base::Error{what + ": " + std::strerror(err) +
                                   ": the target's filesystem has no room for this file's xattrs (ext4 keeps all of "
                                   "a file's xattrs in one block, often 4 KiB)",
                               E2BIG};
        return base::sys_error(what, err);
    }
    return base::Ok();
}

base::Result<void> copy_acls(int from_fd, int to_fd) {
    std::string from = proc_fd_path(from_fd), to = proc_fd_path(to_fd);
    auto none = [](int e) { return e == ENODATA || e == ENOTSUP || e == EOPNOTSUPP; };
    for (const char* name : {"system.posix_acl_access", "system.posix_acl_default"}) {
        std::string buf;
        ssize_t n = 0;
        for (int tries = 0; tries < 4; tries++) {  // sized by a probe; it may grow in between
            n = ::getxattr(from.c_str(), name, nullptr, 0);
            if (n <= 0) break;
            buf.resize(static_cast<size_t>(n));
            n = ::getxattr(from.c_str(), name, buf.data(), buf.size());
            if (n >= 0 || errno != ERANGE) break;
        }
        if (n < 0 && none(errno)) continue;  // no ACL, or a filesystem without ACLs
        if (n < 0) return base::sys_error(std::string("read ") + name + " of the original");
        if (n == 0) continue;
        if (::setxattr(to.c_str(), name, buf.data(), static_cast<size_t>(n), 0) != 0 && !none(errno))
            return base::sys_error(std::string("copy ") + name + " to the new version");
    }
    return base::Ok();
}

base::Result<void> set_mode_mtime(int fd, uint32_t mode, int64_t mtime_ns, bool set_mode, uint32_t special) {
    struct timespec ts[2];
    ts[0].tv_sec = 0;
    ts[0].tv_nsec = UTIME_OMIT;
    ts[1] = timespec_of(mtime_ns);
    // fchmod/futimens on the fd itself; O_PATH fds (EBADF) through /proc.
    mode_t m = (mode & 0777) | (special & 07000);
    if (set_mode && ::fchmod(fd, m) != 0) {
        if (errno != EBADF || ::chmod(proc_fd_path(fd).c_str(), m) != 0) return base::sys_error("chmod");
    }
    if (::futimens(fd, ts) != 0) {
        if (errno != EBADF || ::utimensat(AT_FDCWD, proc_fd_path(fd).c_str(), ts, 0) != 0)
            return base::sys_error("set mtime");
    }
    return base::Ok();
}

base::Result<void> copy_data(int in_fd, int out_fd) {
    loff_t in_off = 0, out_off = 0;
    for (;;) {
        ssize_t n = ::copy_file_range(in_fd, &in_off, out_fd, &out_off, 1 << 30, 0);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EXDEV || errno == ENOSYS || errno == EOPNOTSUPP || errno == EINVAL) break;
            return base::sys_error("copy");
        }
        if (n == 0) {
            if (::ftruncate(out_fd, out_off) != 0) return base::sys_error("truncate");
            return base::Ok();
        }
    }
    std::vector<char> buf(1 << 20);
    for (;;) {
        ssize_t n = ::pread(in_fd, buf.data(), buf.size(), in_off);
        if (n < 0) {
            if (errno == EINTR) continue;
            return base::sys_error("read");
        }
        if (n == 0) break;
        for (ssize_t done = 0; done < n;) {
            ssize_t w = ::pwrite(out_fd, buf.data() + done, static_cast<size_t>(n - done), out_off);
            if (w < 0) {
                if (errno == EINTR) continue;
                return base::sys_error("write");
            }
            done += w;
            out_off += w;
        }
        in_off += n;
    }
    if (::ftruncate(out_fd, out_off) != 0) return base::sys_error("truncate");
    return base::Ok();
}

namespace {

bool same_dir(int a, int b) {
    struct stat sa {
    }, sb{};
    return a == b || (::fstat(a, &sa) == 0 && ::fstat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

// An owner-unwritable directory of ours at (dir, name), given u+w; `was` holds its mode to put back.
struct Widened {
    base::Fd fd;
    mode_t was = 0;
};

bool widen(int dir, const std::string& name, Widened& w) {
    base::Fd f(::openat(dir, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!f.valid() || ::fstat(f.get(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() ||
        (st.st_mode & S_IWUSR))
        return false;
    if (::chmod(proc_fd_path(f.get()).c_str(), (st.st_mode & 07777) | S_IWUSR) != 0) return false;
    w.fd = std::move(f);
    w.was = st.st_mode & 07777;
    return true;
}

}  // namespace

int renameat2_any_mode(int from_dir, const std::string& from, int to_dir, const std::string& to, unsigned flags) {
    if (::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), flags) == 0) return 0;
    if (errno != EACCES || same_dir(from_dir, to_dir)) return -1;
    Widened a, b;
    bool wa = widen(from_dir, from, a);
    bool wb = (flags & RENAME_EXCHANGE) && widen(to_dir, to, b);
    if (!wa && !wb) {
        errno = EACCES;
        return -1;
    }
    int r = ::renameat2(from_dir, from.c_str(), to_dir, to.c_str(), flags);
    int err = errno;
    // The fds follow the inodes wherever the rename put them.
    for (Widened* w : {&a, &b})
        if (w->fd.valid()) ::chmod(proc_fd_path(w->fd.get()).c_str(), w->was);
    errno = err;
    return r;
}

base::Result<void> rename2(int from_dir, const std::string& from, int to_dir, const std::string& to, unsigned flags,
                           const std::string& what) {
    if (renameat2_any_mode(from_dir, from, to_dir, to, flags) != 0) return base::sys_error(what);
    return base::Ok();
}

base::Result<int> DirCache::get(const std::string& rel) {
    auto it = cache_.find(rel);
    if (it != cache_.end()) {
        it->second.used = ++tick_;
        return it->second.fd.get();
    }
    if (cache_.size() >= max_) {  // close the least recently used half
        std::vector<uint64_t> ticks;
        ticks.reserve(cache_.size());
        for (const auto& [k, e] : cache_) ticks.push_back(e.used);
        auto mid = ticks.begin() + static_cast<ptrdiff_t>(ticks.size() / 2);
        std::nth_element(ticks.begin(), mid, ticks.end());
        uint64_t cut = *mid;
        for (auto e = cache_.begin(); e != cache_.end();) e = e->second.used < cut ? cache_.erase(e) : std::next(e);
    }
    TRY(base::Fd fd, open_dir_beneath(root_, rel));
    int raw = fd.get();
    cache_.emplace(rel, Entry{std::move(fd), ++tick_});
    return raw;
}

size_t staging_dir_budget() {
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return DirCache::kMax;
    rlim_t want = std::min<rlim_t>(rl.rlim_max, rlim_t{1} << 20);
    if (rl.rlim_cur < want) {
        struct rlimit raised = {want, rl.rlim_max};
        if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) rl.rlim_cur = want;
    }
    // At most 2^17 (~130,000 dirs: a struct file each, some 35 MB of kernel memory).
    return std::clamp<size_t>(static_cast<size_t>(rl.rlim_cur / 2), DirCache::kMax, size_t{1} << 17);
}

std::string random_token(size_t bytes) {
    std::vector<unsigned char> b(bytes);
    size_t got = 0;
    while (got < bytes) {
        ssize_t n = ::getrandom(b.data() + got, bytes - got, 0);
        if (n <= 0) {
            if (errno == EINTR) continue;
            for (; got < bytes; got++) b[got] = static_cast<unsigned char>(::rand());  // never reached in practice
            break;
        }
        got += static_cast<size_t>(n);
    }
    return base::to_hex(std::string_view(reinterpret_cast<const char*>(b.data()), b.size()));
}

std::string now_rfc3339() {
    time_t t = ::time(nullptr);
    struct tm tm {};
    ::gmtime_r(&t, &tm);
    char buf[32];
    ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace review
