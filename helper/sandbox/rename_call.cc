#include "helper/sandbox/rename_call.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>

#include <cstring>

namespace rename_call {

namespace {

template <class T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <class T>
bool get(const std::string& in, size_t& at, T* v) {
    if (at > in.size() || in.size() - at < sizeof *v) return false;
    std::memcpy(v, in.data() + at, sizeof *v);
    at += sizeof *v;
    return true;
}

int as_fd(uint64_t arg) { return static_cast<int>(static_cast<uint32_t>(arg)); }  // the kernel takes an int

}  // namespace

const std::vector<const char*>& notified_syscalls() {
    static const std::vector<const char*> names = {"rename", "renameat", "renameat2", "link", "linkat"};
    return names;
}

namespace {

// rename(2), link(2): two paths, both from the cwd.
Args from_cwd(const uint64_t a[6]) {
    Args r;
    r.olddirfd = r.newdirfd = AT_FDCWD;
    r.oldpath = a[0];
    r.newpath = a[1];
    return r;
}

// The *at forms: (olddirfd, oldpath, newdirfd, newpath).
Args at_dirfds(const uint64_t a[6]) {
    Args r;
    r.olddirfd = as_fd(a[0]);
    r.oldpath = a[1];
    r.newdirfd = as_fd(a[2]);
    r.newpath = a[3];
    return r;
}

}  // namespace

std::optional<Args> decode(int nr, const uint64_t a[6]) {
#ifdef __NR_rename
    if (nr == __NR_rename) return from_cwd(a);
#endif
    if (nr != __NR_renameat && nr != __NR_renameat2) return std::nullopt;
    Args r = at_dirfds(a);
    if (nr == __NR_renameat2) r.flags = static_cast<unsigned>(a[4]);
    return r;
}

std::optional<Args> decode_link(int nr, const uint64_t a[6]) {
#ifdef __NR_link
    if (nr == __NR_link) return from_cwd(a);
#endif
    if (nr != __NR_linkat) return std::nullopt;
    Args r = at_dirfds(a);
    r.flags = static_cast<unsigned>(a[4]);
    return r;
}

std::optional<LinkSource> proc_link_source(int olddirfd, const std::string& oldpath, unsigned flags) {
    unsigned follow = (flags & ~static_cast<unsigned>(AT_EMPTY_PATH)) | AT_SYMLINK_FOLLOW;
    if (oldpath.empty() && (flags & AT_EMPTY_PATH))
        return LinkSource{olddirfd == AT_FDCWD ? "cwd" : "fd/" + std::to_string(olddirfd), follow};
    for (const char* self : {"/proc/self/", "/proc/thread-self/"}) {
        size_t n = std::strlen(self);
        if (oldpath.compare(0, n, self) == 0 && oldpath.size() > n) return LinkSource{oldpath.substr(n), flags};
    }
    return std::nullopt;
}

std::string encode(const Request& r) {
    std::string out;
    put(out, r.id);
    put(out, r.flags);
    put(out, static_cast<uint8_t>((r.old_fd ? 1 : 0) | (r.new_fd ? 2 : 0) | (r.plain ? 4 : 0) | (r.link ? 8 : 0)));
    out += r.oldpath;
    out += '\0';
    out += r.newpath;
    return out;
}

std::optional<Request> decode_request(const std::string& msg) {
    Request r;
    size_t at = 0;
    uint8_t fds = 0;
    if (!get(msg, at, &r.id) || !get(msg, at, &r.flags) || !get(msg, at, &fds) || fds > 15) return std::nullopt;
    size_t nul = msg.find('\0', at);
    if (nul == std::string::npos || msg.find('\0', nul + 1) != std::string::npos) return std::nullopt;
    r.old_fd = fds & 1;
    r.new_fd = fds & 2;
    r.plain = fds & 4;
    r.link = fds & 8;
    r.oldpath = msg.substr(at, nul - at);
    r.newpath = msg.substr(nul + 1);
    return r;
}

std::string encode(const Reply& r) {
    std::string out;
    put(out, r.id);
    put(out, static_cast<int32_t>(r.err));
    return out;
}

std::optional<Reply> decode_reply(const std::string& msg) {
    Reply r;
    size_t at = 0;
    int32_t err = 0;
    if (!get(msg, at, &r.id) || !get(msg, at, &err) || at != msg.size() || err < 0) return std::nullopt;
    r.err = err;
    return r;
}

Split split(const std::string& path) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    size_t slash = p.rfind('/');
    if (slash == std::string::npos) return {".", p};
    std::string parent = p.substr(0, slash);
    while (parent.size() > 1 && parent.back() == '/') parent.pop_back();
    if (parent.empty()) parent = "/";
    return {parent, p.substr(slash + 1)};
}

bool may_need_emulation(unsigned flags, bool source_is_dir) { return source_is_dir && !(flags & RENAME_EXCHANGE); }

std::string temp_name(uint64_t id) { return ".layover-rename-" + std::to_string(id); }

}  // namespace rename_call
