#include "helper/sandbox/rename/rename_call.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/syscall.h>

#include <cstdlib>
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

namespace {

// One or more slashes at `*at`, with "." components among them: skipped.
bool separator(const std::string& path, size_t* at) {
    if (*at >= path.size() || path[*at] != '/') return false;
    while (*at < path.size()) {
        if (path[*at] == '/') ++*at;
        else if (path[*at] == '.' && (*at + 1 == path.size() || path[*at + 1] == '/')) ++*at;
        else break;
    }
    return true;
}

// "/proc/self" or "/proc/thread-self" at the start of `path`, followed by its
// end or a slash: the length of that prefix, else 0. Spelled with repeated
// slashes or "." components too ("//proc/./self"), as the kernel resolves
// them alike: the worker found no `self` there (ENOENT: attack20).
size_t own_proc_prefix(const std::string& path, bool* thread) {
    size_t at = 0;
    if (!separator(path, &at) || path.compare(at, 4, "proc") != 0) return 0;
    at += 4;
    if (!separator(path, &at)) return 0;
    for (const char* self : {"self", "thread-self"}) {
        size_t n = std::strlen(self);
        if (path.compare(at, n, self) == 0 && (path.size() == at + n || path[at + n] == '/')) {
            *thread = self[0] == 't';
            return at + n;
        }
    }
    return 0;
}

long last_number(const std::string& status, const char* key) {
    size_t at = status.rfind(std::string("\n") + key, std::string::npos);
    if (at == std::string::npos) return 0;
    size_t end = status.find('\n', at + 1);
    std::string line = status.substr(at + 1, end == std::string::npos ? std::string::npos : end - at - 1);
    size_t last = line.find_last_of(" \t");
    if (last == std::string::npos) return 0;
    char* stop = nullptr;
    long v = std::strtol(line.c_str() + last + 1, &stop, 10);
    return stop && *stop == '\0' && v > 0 ? v : 0;
}

}  // namespace

std::optional<TaskIds> task_ids(const std::string& status) {
    TaskIds ids{last_number("\n" + status, "NStgid:"), last_number("\n" + status, "NSpid:")};
    if (ids.tgid <= 0 || ids.tid <= 0) return std::nullopt;
    return ids;
}

bool own_proc_source(const std::string& oldpath, unsigned flags) {
    bool thread = false;
    return (oldpath.empty() && (flags & AT_EMPTY_PATH)) || own_proc_prefix(oldpath, &thread) > 0;
}

std::optional<LinkSource> proc_link_source(int olddirfd, const std::string& oldpath, unsigned flags,
                                           const TaskIds& ids) {
    unsigned follow = (flags & ~static_cast<unsigned>(AT_EMPTY_PATH)) | AT_SYMLINK_FOLLOW;
    std::string tid = "/proc/" + std::to_string(ids.tid);
    if (oldpath.empty() && (flags & AT_EMPTY_PATH))  // the calling thread's fd table and cwd
        return LinkSource{tid + (olddirfd == AT_FDCWD ? "/cwd" : "/fd/" + std::to_string(olddirfd)), follow};
    bool thread = false;
    size_t n = own_proc_prefix(oldpath, &thread);
    if (!n) return std::nullopt;
    std::string dir = "/proc/" + std::to_string(ids.tgid) + (thread ? "/task/" + std::to_string(ids.tid) : "");
    return LinkSource{dir + oldpath.substr(n), flags};
}

std::string encode(const Request& r) {
    std::string out;
    put(out, r.id);
    put(out, r.flags);
    put(out, static_cast<uint8_t>((r.old_fd ? 1 : 0) | (r.new_fd ? 2 : 0) | (r.plain ? 4 : 0) | (r.link ? 8 : 0) |
                                  (r.sweep ? 16 : 0)));
    out += r.oldpath;
    out += '\0';
    out += r.newpath;
    return out;
}

std::optional<Request> decode_request(const std::string& msg) {
    Request r;
    size_t at = 0;
    uint8_t fds = 0;
    if (!get(msg, at, &r.id) || !get(msg, at, &r.flags) || !get(msg, at, &fds) || fds > 31) return std::nullopt;
    size_t nul = msg.find('\0', at);
    if (nul == std::string::npos || msg.find('\0', nul + 1) != std::string::npos) return std::nullopt;
    r.old_fd = fds & 1;
    r.new_fd = fds & 2;
    r.plain = fds & 4;
    r.link = fds & 8;
    r.sweep = fds & 16;
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

}  // namespace rename_call
