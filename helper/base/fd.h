// Move-only owner of a file descriptor. Every fd layover opens is O_CLOEXEC.
#pragma once
#include <string>
#include <vector>

#include "helper/base/result.h"

namespace base {

class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    Fd(Fd&& o) noexcept : fd_(o.release()) {}
    Fd& operator=(Fd&& o) noexcept;
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd();

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    int release();            // give up ownership; returns the fd
    void reset(int fd = -1);  // close the current fd (errors ignored), own fd
    Result<void> close();     // close and report failure (for written files)

private:
    int fd_ = -1;
};

// open/openat with O_CLOEXEC added; errors name the path.
Result<Fd> open_at(int dirfd, const std::string& path, int flags, unsigned mode = 0);
Result<void> write_all(int fd, const void* data, size_t len);
Result<std::string> read_all(int fd, size_t limit);  // error if more than limit bytes
// Up to n bytes (fewer at end of file or on a read error: callers compare sizes).
std::string read_upto(int fd, size_t n);

}  // namespace base

namespace base {
// Close every fd except those listed (close_range over the gaps).
void close_fds_except(std::vector<int> keep);
// Make sure fds 0-2 are open (on /dev/null), as under CI with no stdin.
// stdout_fails: a closed fd 1 gets /dev/null read-only, so that writing the
// verb's output fails (EBADF) and is said (cli::checked_stdout), and no file
// the verb opens later takes fd 1 (found by the attack pass of 27 Nov:
// `layover status >&-` put its status cache's temporary file on fd 1 and
// ended with exit 0, its output lost).
void ensure_std_fds(bool stdout_fails = false);
}  // namespace base
