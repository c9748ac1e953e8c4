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

}  // namespace base
