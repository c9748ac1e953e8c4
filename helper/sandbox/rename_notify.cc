#include "helper/sandbox/rename_notify.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "helper/sandbox/rename_worker.h"

namespace {

// A NUL-terminated string from the task's memory, read once (at most
// PATH_MAX bytes, page by page so an unmapped tail does not fail the read).
bool read_string(int mem, uint64_t addr, std::string* out) {
    out->clear();
    char page[4096];
    while (out->size() < 4096) {
        size_t room = 4096 - (addr % 4096);
        ssize_t n = ::pread(mem, page, room, static_cast<off_t>(addr));
        if (n <= 0) return false;
        void* nul = std::memchr(page, '\0', static_cast<size_t>(n));
        if (nul) {
            out->append(page, static_cast<size_t>(static_cast<char*>(nul) - page));
            return true;
        }
        out->append(page, static_cast<size_t>(n));
        addr += static_cast<uint64_t>(n);
    }
    return false;  // longer than PATH_MAX: the kernel will say ENAMETOOLONG
}

base::Fd dir_of(pid_t pid, int64_t dirfd) {
    std::string p =
        "/proc/" + std::to_string(pid) +
        (static_cast<int>(dirfd) == AT_FDCWD ? std::string("/cwd") : "/fd/" + std::to_string(static_cast<int>(dirfd)));
    return base::Fd(::open(p.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
}

}  // namespace

bool RenameNotify::handle_one() {
    struct seccomp_notif req;
    std::memset(&req, 0, sizeof req);
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, &req) != 0) return errno == EINTR || errno == ENOENT;
    struct seccomp_notif_resp resp;
    std::memset(&resp, 0, sizeof resp);
    resp.id = req.id;
    resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;

    int64_t olddir = AT_FDCWD, newdir = AT_FDCWD;
    uint64_t from_addr = 0, to_addr = 0;
    unsigned flags = 0;
    const auto* a = req.data.args;
    bool known = true;
    if (req.data.nr == SYS_rename) {
        from_addr = a[0];
        to_addr = a[1];
    } else if (req.data.nr == SYS_renameat || req.data.nr == SYS_renameat2) {
        olddir = static_cast<int64_t>(static_cast<int>(a[0]));
        from_addr = a[1];
        newdir = static_cast<int64_t>(static_cast<int>(a[2]));
        to_addr = a[3];
        if (req.data.nr == SYS_renameat2) flags = static_cast<unsigned>(a[4]);
    } else {
        known = false;
    }
    std::string from, to;
    base::Fd mem(::open(("/proc/" + std::to_string(req.pid) + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
    base::Fd od, nd;
    if (known && mem.valid() && read_string(mem.get(), from_addr, &from) && read_string(mem.get(), to_addr, &to)) {
        od = dir_of(static_cast<pid_t>(req.pid), olddir);
        nd = dir_of(static_cast<pid_t>(req.pid), newdir);
    }
    // Still the same task and call: what we read and opened is its own.
    bool valid = ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &req.id) == 0;
    if (valid && od.valid() && nd.valid() && !worker_failed_) {
        if (!worker_) {
            auto w = rename_worker::start(static_cast<pid_t>(req.pid));
            if (w) {
                worker_.emplace(std::move(w->first));
                worker_sock_ = std::move(w->second);
            } else {
                worker_failed_ = true;
            }
        }
        if (worker_) {
            auto r = rename_worker::call(worker_sock_.get(), od.get(), nd.get(), flags, from, to);
            if (r && r.value() != rename_worker::kContinue) {
                resp.flags = 0;
                resp.error = r.value();
                resp.val = 0;
            } else if (!r) {
                worker_failed_ = true;  // fall back to the kernel's own answer from now on
            }
        }
    }
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SEND, &resp) != 0 && errno != ENOENT) return true;
    return true;
}
