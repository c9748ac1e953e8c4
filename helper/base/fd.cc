#include "helper/base/fd.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace base {

Fd& Fd::operator=(Fd&& o) noexcept {
    if (this != &o) reset(o.release());
    return *this;
}

Fd::~Fd() { reset(); }

int Fd::release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
}

void Fd::reset(int fd) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
}

Result<void> Fd::close() {
    int fd = release();
    if (fd >= 0 && ::close(fd) != 0 && errno != EINTR) return sys_error("close");
    return Ok();
}

Result<Fd> open_at(int dirfd, const std::string& path, int flags, unsigned mode) {
    int fd = ::openat(dirfd, path.c_str(), flags | O_CLOEXEC, mode);
    if (fd < 0) return sys_error("open " + path);
    return Fd(fd);
}

Result<void> write_all(int fd, const void* data, size_t len) {
    const char* p = static_cast<const char*>(data);
    while (len > 0) {
        ssize_t n = ::write(fd, p, len);
        if (n < 0) {
            if (errno == EINTR) continue;
            return sys_error("write");
        }
        p += n;
        len -= static_cast<size_t>(n);
    }
    return Ok();
}

Result<std::string> read_all(int fd, size_t limit) {
    std::string out;
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            return sys_error("read");
        }
        if (n == 0) break;
        if (out.size() + static_cast<size_t>(n) > limit)
            return error("input larger than " + std::to_string(limit) + " bytes");
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

std::string read_upto(int fd, size_t n) {
    std::string data(n, '\0');
    size_t got = 0;
    while (got < data.size()) {
        ssize_t r = ::read(fd, data.data() + got, data.size() - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<size_t>(r);
    }
    data.resize(got);
    return data;
}

}  // namespace base

#include <algorithm>
#include <climits>

namespace base {

void close_fds_except(std::vector<int> keep) {
    std::sort(keep.begin(), keep.end());
    unsigned next = 0;
    for (int k : keep) {
        if (k < 0 || static_cast<unsigned>(k) < next) continue;
        if (static_cast<unsigned>(k) > next) ::close_range(next, static_cast<unsigned>(k) - 1, 0);
        next = static_cast<unsigned>(k) + 1;
    }
    ::close_range(next, UINT_MAX, 0);
}

void ensure_std_fds(bool stdout_fails) {
    for (int fd = 0; fd <= 2; fd++) {
        if (::fcntl(fd, F_GETFD) >= 0) continue;
        int n = ::open("/dev/null", fd == 1 && stdout_fails ? O_RDONLY : O_RDWR);  // no O_CLOEXEC: it stays fd 0-2
        if (n >= 0 && n != fd) {
            ::dup2(n, fd);
            ::close(n);
        }
    }
}

}  // namespace base
