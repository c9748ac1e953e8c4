#include "helper/sandbox/rename/rename_notify.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <seccomp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "helper/base/fd.h"
#include "helper/sandbox/ipc/fd_pass.h"
#include "helper/sandbox/seccomp/seccomp.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/records/rename_temps.h"
#include "helper/store/session/session.h"

namespace {

// A NUL-terminated path from the task's memory, read page by page (a path
// may end just before an unmapped page). 0 or the errno the kernel's own
// read would give: EFAULT, ENAMETOOLONG; ESRCH if the task is gone.
int read_path(pid_t pid, uint64_t addr, std::string* out) {
    out->clear();
    if (addr == 0) return EFAULT;
    static const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    char buf[PATH_MAX];
    while (out->size() < PATH_MAX) {
        // Never past PATH_MAX bytes in all, as the kernel reads (attack31:
        // a chunk ran on to a page more, and a path of 4096 bytes or more
        // whose dir was shorter was renamed where the kernel says
        // ENAMETOOLONG).
        size_t chunk = std::min(page - addr % page, sizeof buf - out->size());
        struct iovec local = {buf, chunk};
        struct iovec remote = {reinterpret_cast<void*>(addr), chunk};
        ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n <= 0) return n < 0 && errno == ESRCH ? ESRCH : EFAULT;
        const void* nul = std::memchr(buf, '\0', static_cast<size_t>(n));
        if (nul) {
            out->append(buf, static_cast<const char*>(nul) - buf);
            return 0;
        }
        out->append(buf, static_cast<size_t>(n));
        addr += static_cast<uint64_t>(n);
    }
    return ENAMETOOLONG;
}

std::string proc(pid_t pid, const std::string& rest) { return "/proc/" + std::to_string(pid) + "/" + rest; }

// The last name the worker is handed for `path`, its trailing slash kept:
// the kernel's rule on it (a file's `rename f g/` is ENOTDIR, `link f h/`
// ENOENT) then holds in the worker's call (attack31: the split dropped it,
// and both were made).
std::string worker_name(const std::string& name, const std::string& path) {
    return path.size() > 1 && path.back() == '/' ? name + "/" : name;
}

// Only to choose the fast path: whether the source looks like a directory,
// seen through the task's own /proc links.
bool looks_like_dir(pid_t pid, int dirfd, const std::string& path) {
    std::string at =
        path.empty() || path[0] != '/' ? (dirfd == AT_FDCWD ? "cwd/" : "fd/" + std::to_string(dirfd) + "/") : "root";
    struct stat st;
    return ::lstat(proc(pid, at + path).c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The task's dirfd for a relative path; an absolute one needs none (-1).
// 0 or the errno the task gets for a bad dirfd.
int task_dirfd(pid_t pid, int pidfd, int dirfd, const std::string& path, base::Fd* out) {
    if (!path.empty() && path[0] == '/') return 0;
    int fd = dirfd == AT_FDCWD ? ::open(proc(pid, "cwd").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC)
                               : static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd, dirfd, 0));
    if (fd < 0) return out_of_fds() ? ENOMEM : dirfd == AT_FDCWD ? ENOENT : EBADF;
    out->reset(fd);
    return 0;
}

// /proc/TID/status ("" when gone).
std::string read_status(pid_t tid) {
    base::Fd fd(::open(proc(tid, "status").c_str(), O_RDONLY | O_CLOEXEC));
    auto text = fd.valid() ? base::read_all(fd.get(), 1 << 16) : base::Result<std::string>(std::string());
    return text ? text.value() : std::string();
}

// Tgid of a task from /proc/TID/status; -1 when gone.
pid_t thread_group(pid_t tid) {
    std::string text = read_status(tid);
    size_t at = text.find("\nTgid:");
    return at == std::string::npos ? -1 : static_cast<pid_t>(std::strtol(text.c_str() + at + 6, nullptr, 10));
}

uint64_t ns_inode(pid_t pid, const char* which) {
    struct stat st;
    return ::stat(proc(pid, std::string("ns/") + which).c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace

int task_pidfd(pid_t tid) {
    int fd = static_cast<int>(::syscall(SYS_pidfd_open, tid, 0));  // (ENOENT for a thread's id)
    if (fd >= 0) return fd;
    fd = static_cast<int>(::syscall(SYS_pidfd_open, tid, O_EXCL /* PIDFD_THREAD */));
    if (fd >= 0) return fd;
    pid_t tgid = thread_group(tid);
    return tgid > 0 ? static_cast<int>(::syscall(SYS_pidfd_open, tgid, 0)) : -1;
}

namespace {
// Set by precompile_filter() in setup; init and the child are its forks.
std::optional<seccomp::Program> precompiled;
}  // namespace

void precompile_filter(bool notify) {
    if (!notify) return;
    auto p = seccomp::compile_notifying(default_seccomp_rules(), rename_call::notified_syscalls());
    if (p) precompiled = std::move(p.value());
}

base::Result<void> install_filter(int sync_fd, bool notify) {
    if (!notify) {
        sync_msg::send(sync_fd, Sync::Warning,
                       "renaming a directory that existed before the session fails (EXDEV): this kernel lacks seccomp "
                       "user notification (Linux 5.5+)");
        return seccomp::install(default_seccomp_rules());
    }
    TRY(base::Fd listener, precompiled
                               ? seccomp::load_notifying(*precompiled)
                               : seccomp::install_notifying(default_seccomp_rules(), rename_call::notified_syscalls()));
    if (!sync_msg::send_fd(sync_fd, Sync::Listener, listener.get()))  // [sync 5]
        return base::sys_error("passing the rename listener to the supervisor");
    return base::Ok();
}

void RenameService::set_listener(base::Fd fd) {
    listener_ = std::move(fd);
    // Linux 6.6: the task and the supervisor hand the CPU to each other
    // instead of waking through the scheduler (docs/performance.md).
    ::ioctl(listener_.get(), SECCOMP_IOW(4, uint64_t) /* NOTIF_SET_FLAGS */, 1UL /* FD_SYNC_WAKE_UP */);
}

RenameService::~RenameService() {
    stop_worker();
    finish_temps();
    if (req_)
        seccomp_notify_free(static_cast<struct seccomp_notif*>(req_), static_cast<struct seccomp_notif_resp*>(resp_));
}

void RenameService::respond(uint64_t id, int err, bool cont) {
    auto* r = static_cast<struct seccomp_notif_resp*>(resp_);
    std::memset(r, 0, sizeof *r);
    r->id = id;
    r->error = cont ? 0 : -err;
    r->flags = cont ? SECCOMP_USER_NOTIF_FLAG_CONTINUE : 0;
    seccomp_notify_respond(listener_.get(), r);  // ENOENT: the task is gone, or was interrupted
}

void RenameService::stop_worker() {
    // A task waiting on an answer that will not come gets EXDEV, which a
    // rename or link may always return (mv copies instead). Never CONTINUE:
    // the kernel would resolve a kept session's paths again, away from the
    // dir its name was noted in (the race attack16 closed), and an agent
    // able to kill the worker (memory pressure under --max-memory, the OOM
    // killer) could reopen it at will (found by attack20).
    for (uint64_t id : pending_) respond(id, EXDEV, false);
    // Its copy for the call in hand may be half-made: swept at the run's
    // end (finish_temps), before the session is counted or reviewed.
    if (!pending_.empty()) temps_left_ = upper_dirty_ = true;
    pending_.clear();
    sent_.clear();
    for (const auto& q : backlog_) respond(q.id, EXDEV, false);
    backlog_.clear();
    worker_.reset();
}

namespace {

bool send_to(int sock, const std::string& msg, const base::Fd& olddir, const base::Fd& newdir) {
    std::vector<int> fds;
    if (olddir.valid()) fds.push_back(olddir.get());
    if (newdir.valid()) fds.push_back(newdir.get());
    return fd_pass::send(sock, msg, fds);
}

bool socket_full() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS; }

// The dirfds could not go: the user's fds in flight on unix sockets (a
// count per user, which the command shares) passed this process's
// RLIMIT_NOFILE. The call fails, never runs unresolved (attack20).
bool fds_refused() { return errno == ETOOMANYREFS; }

}  // namespace

void RenameService::flush_backlog() {
    while (worker_ && !backlog_.empty()) {
        Queued& q = backlog_.front();
        if (seccomp_notify_id_valid(listener_.get(), q.id) != 0) {  // its task was killed meanwhile
            backlog_.pop_front();
            continue;
        }
        if (!send_to(worker_->sock.get(), q.msg, q.olddir, q.newdir)) {
            if (fds_refused()) {
                respond(q.id, ENOMEM, false);
                backlog_.pop_front();
                continue;
            }
            if (!socket_full()) worker_died();  // gone (EPIPE): as its hang-up, which the loop reads later
            return;
        }
        pending_.insert(q.id);
        if (q.may_copy && sent_.size() < kMaxSent) sent_.emplace(q.id, std::move(q));
        backlog_.pop_front();
    }
}

void RenameService::on_listener(short revents) {
    if (!(revents & POLLIN)) {
        if (revents & (POLLHUP | POLLERR | POLLNVAL)) listener_.reset();  // no task left under the filter
        return;
    }
    if (!req_ && seccomp_notify_alloc(reinterpret_cast<struct seccomp_notif**>(&req_),
                                      reinterpret_cast<struct seccomp_notif_resp**>(&resp_)) != 0)
        return;
    auto* n = static_cast<struct seccomp_notif*>(req_);
    std::memset(n, 0, sizeof *n);
    if (seccomp_notify_receive(listener_.get(), n) != 0) return;
    pid_t pid = static_cast<pid_t>(n->pid);
    uint64_t id = n->id;
    uint64_t raw[6];
    for (int i = 0; i < 6; i++) raw[i] = n->data.args[i];
    if (auto link = rename_call::decode_link(n->data.nr, raw)) return on_link(pid, id, *link);
    auto args = rename_call::decode(n->data.nr, raw);
    if (!args) return respond(id, 0, true);

    rename_call::Request req;
    req.id = id;
    req.flags = args->flags;
    for (auto [addr, out] : {std::pair{args->oldpath, &req.oldpath}, std::pair{args->newpath, &req.newpath}}) {
        int err = read_path(pid, addr, out);
        if (err == ESRCH) return;
        if (err) return respond(id, err, false);
    }
    base::Fd olddir, newdir;
    // A kept session's: the entries the call replaces noted, and the call
    // made on the dirs resolved for that, by the worker. A source that looks
    // like a directory (a move the worker may copy) is noted so too: the look
    // is only a hint, by a path the supervisor resolves in its own root (an
    // absolute symlink in it reads the real tree), and by the worker's call
    // the source may be a file (attack31: a copy renamed over another unnoted).
    bool maybe_dir = rename_call::may_need_emulation(req.flags, looks_like_dir(pid, args->olddirfd, req.oldpath));
    bool exchange = req.flags & RENAME_EXCHANGE;
    std::string newname, oldname;
    int noted = note_replaced(pid, args->newdirfd, req.newpath, &newdir, &newname);
    if (!noted && exchange) noted = note_replaced(pid, args->olddirfd, req.oldpath, &olddir, &oldname);
    if (noted == EXDEV && maybe_dir && !req.oldpath.empty()) {
        // A destination the supervisor cannot name (deeper than PATH_MAX):
        // left unnoted, on the task's dirfds, but only a directory may move
        // there (the source with a trailing slash: ENOTDIR for another), and
        // a directory replaces no file.
        newdir.reset();
        if (req.oldpath.back() != '/') req.oldpath += "/";
        noted = 0;
    }
    if (noted) return respond(id, noted, false);
    if (newdir.valid() && (!exchange || olddir.valid())) {
        req.plain = !maybe_dir;  // else a directory the overlay refuses to move is copied (rename_worker.cc)
        req.newpath = worker_name(newname, req.newpath);
        if (exchange) req.oldpath = worker_name(oldname, req.oldpath);
    } else if (!maybe_dir) {
        return respond(id, 0, true);
    }
    base::Fd pidfd(task_pidfd(pid));
    if (!pidfd.valid()) return respond(id, EXDEV, false);  // gone (else: EXDEV, as in stop_worker())
    if (!olddir.valid())
        if (int err = task_dirfd(pid, pidfd.get(), args->olddirfd, req.oldpath, &olddir))
            return respond(id, err, false);
    if (!newdir.valid())
        if (int err = task_dirfd(pid, pidfd.get(), args->newdirfd, req.newpath, &newdir))
            return respond(id, err, false);
    hand_on(pid, req, std::move(olddir), std::move(newdir));
}

void RenameService::on_link(pid_t pid, uint64_t id, const rename_call::Args& link) {
    rename_call::Request req;
    req.id = id;
    req.link = true;
    req.flags = link.flags;
    int err = read_path(pid, link.newpath, &req.newpath);
    if (err == ESRCH) return;
    // A kept session's: the name noted where the call will make it, and the
    // call made there by the worker, never resolved again (docs/security.md,
    // "When the copy was made"). Else (discard, or nothing to note) the kernel
    // runs it as the task asked.
    base::Fd newdir, olddir;
    std::string name;
    if (!err) err = note_replaced(pid, link.newdirfd, req.newpath, &newdir, &name);
    if (err || !newdir.valid()) return respond(id, err, err == 0);
    req.newpath = worker_name(name, req.newpath);
    err = read_path(pid, link.oldpath, &req.oldpath);
    if (err == ESRCH) return;
    if (err) return respond(id, err, false);
    base::Fd pidfd(task_pidfd(pid));
    if (!pidfd.valid()) return respond(id, EXDEV, false);
    if (rename_call::own_proc_source(req.oldpath, req.flags)) {
        // Through the sandbox's /proc, by the task's own numbers there (the
        // host's /proc/PID, a `..` away from the host's /, is not the task's
        // view: rename_call.h). Absolute: the worker resolves it from the
        // root it shares with the task.
        auto ids = rename_call::task_ids(read_status(pid));
        if (!ids) return respond(id, EXDEV, false);  // gone
        if (req.oldpath.empty() && link.olddirfd != AT_FDCWD) {
            // The fd itself: one the task does not have is EBADF, as the
            // kernel says (its /proc entry's absence would say ENOENT).
            base::Fd fd(
                link.olddirfd < 0 ? -1 : static_cast<int>(::syscall(SYS_pidfd_getfd, pidfd.get(), link.olddirfd, 0)));
            if (!fd.valid()) return respond(id, EBADF, false);
        }
        auto src = rename_call::proc_link_source(link.olddirfd, req.oldpath, req.flags, *ids);
        if (!src) return respond(id, EXDEV, false);  // (own_proc_source said it applies)
        req.oldpath = src->path;
        req.flags = src->flags;
    } else if (int bad = task_dirfd(pid, pidfd.get(), link.olddirfd, req.oldpath, &olddir)) {
        return respond(id, bad, false);
    }
    hand_on(pid, req, std::move(olddir), std::move(newdir));
}

void RenameService::hand_on(pid_t pid, rename_call::Request& req, base::Fd olddir, base::Fd newdir) {
    uint64_t id = req.id;
    // One worker, in the namespaces of the first task that needed it; the
    // sandbox cannot make new ones (no CLONE_NEWUSER, no capabilities).
    uint64_t mntns = ns_inode(pid, "mnt");
    // No worker (its fork failed: the user's process limit, memory):
    // EXDEV, as in stop_worker(), never the call resolved again.
    if (!worker_ && !start_worker(pid, id, mntns)) return respond(id, EXDEV, false);
    if (mntns == 0 || mntns != worker_mntns_) return respond(id, EXDEV, false);
    // Everything above came from this task while it waited in this call: the
    // pid, its fds and namespaces were not someone else's.
    if (seccomp_notify_id_valid(listener_.get(), id) != 0) return;
    req.old_fd = olddir.valid();
    req.new_fd = newdir.valid();
    std::string msg = rename_call::encode(req);
    bool may_copy = !req.plain && !req.link;
    // A worker that died since the loop's poll (its hang-up is read after
    // the sandbox's calls) fails the send with EPIPE: met as its hang-up,
    // by a successor that first removes its half-made copy (attack32: it
    // was stopped without one, and the agent saw the copy), then takes
    // this call. Once: a successor that dies as well leaves EXDEV.
    for (int tries = 0;; tries++) {
        flush_backlog();  // (in order: after the calls already waiting)
        if (!worker_ && !start_worker(pid, id, mntns)) return respond(id, EXDEV, false);
        if (!backlog_.empty()) break;
        if (send_to(worker_->sock.get(), msg, olddir, newdir)) {
            pending_.insert(id);
            if (may_copy && sent_.size() < kMaxSent)
                sent_.emplace(id, Queued{id, std::move(msg), std::move(olddir), std::move(newdir), pid, true});
            return;
        }
        if (fds_refused()) return respond(id, ENOMEM, false);
        if (socket_full()) break;
        worker_died();
        if (tries == 1) return respond(id, EXDEV, false);
    }
    if (backlog_.size() >= kMaxBacklog) return respond(id, ENOMEM, false);
    backlog_.push_back(Queued{id, std::move(msg), std::move(olddir), std::move(newdir), pid, may_copy});
}

bool RenameService::start_worker(pid_t pid, uint64_t id, uint64_t mntns) {
    base::Fd user(::open(proc(pid, "ns/user").c_str(), O_RDONLY | O_CLOEXEC));
    base::Fd mnt(::open(proc(pid, "ns/mnt").c_str(), O_RDONLY | O_CLOEXEC));
    if (!user.valid() || !mnt.valid() || seccomp_notify_id_valid(listener_.get(), id) != 0) return false;
    if (temps_key_.empty()) {
        // The session's key in its dir (an earlier run's, if it left
        // one: that run's leftovers are named with it), so that a later
        // resume, status or save finds a killed supervisor's leftovers
        // too: a discarding run's as well, whose session a SIGKILL
        // leaves crashed, reviewable and resumable; else (the file not
        // written) the run's own, in memory.
        struct stat st;
        temps_inherited_ = !session_dir_.empty() && ::stat(rename_temps::key_path(session_dir_).c_str(), &st) == 0;
        auto key = session_dir_.empty() ? rename_temps::new_key() : rename_temps::key_for_run(session_dir_);
        if (!key && !session_dir_.empty()) key = rename_temps::new_key();
        if (!key) return false;
        temps_key_ = key.value();
    }
    auto started = rename_worker::start(user.get(), mnt.get(), limits_, temps_key_);
    if (!started) return false;
    worker_ = std::make_unique<rename_worker::Worker>(std::move(started.value()));
    worker_mntns_ = mntns;
    return true;
}

void RenameService::worker_died() {
    std::vector<Queued> sweeps;  // each call's copy, if it made one (the one in hand): its name is known
    for (auto& [id, q] : sent_)
        if (!q.sweep && pending_.erase(id)) sweeps.push_back(std::move(q));
    stop_worker();  // the other calls: EXDEV now
    if (sweeps.empty()) return;
    temps_left_ = upper_dirty_ = true;  // the run's end sweeps what the successor could not
    for (auto& q : sweeps) {
        auto req = rename_call::decode_request(q.msg);
        uint64_t mntns = ns_inode(q.pid, "mnt");
        if (!req || (!worker_ && (mntns != worker_mntns_ || !start_worker(q.pid, q.id, mntns)))) {
            respond(q.id, EXDEV, false);
            continue;
        }
        req->sweep = q.sweep = true;
        q.msg = rename_call::encode(*req);
        if (!send_to(worker_->sock.get(), q.msg, q.olddir, q.newdir)) {
            respond(q.id, EXDEV, false);
            continue;
        }
        pending_.insert(q.id);
        sent_.emplace(q.id, std::move(q));
    }
}

void RenameService::on_worker(short revents) {
    // revents may belong to a worker stopped since the poll: its successor's
    // socket does not block.
    if (!worker_ || !(revents & (POLLIN | POLLHUP | POLLERR))) return;
    std::string msg;
    std::vector<base::Fd> fds;
    ssize_t n = fd_pass::recv(worker_->sock.get(), &msg, 64, &fds);
    if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
    if (n <= 0) return worker_died();
    auto reply = rename_call::decode_reply(msg);
    if (reply && pending_.erase(reply->id)) {
        sent_.erase(reply->id);
        respond(reply->id, reply->err, false);
    }
    flush_backlog();  // the worker took a request: room for the next
}

void RenameService::finish_temps() {
    if (session_dir_.empty() || temps_key_.empty()) return;
    if (!temps_left_ && !temps_inherited_) return rename_temps::forget_key(session_dir_);
    // As the owner: the command may have left mode-000 dirs above one.
    std::string dir = session_dir_;
    auto swept = capture::in_owner_ns([&]() -> base::Result<std::string> {
        rename_temps::sweep_session(dir);
        return std::string();
    });
    if (!swept) rename_temps::sweep_session(dir);
}

void RenameService::sweep_upper() {
    if (!upper_dirty_ || session_dir_.empty() || temps_key_.empty()) return;
    std::string upper = session::upper_dir(session_dir_), key = temps_key_;
    // As the owner (mode-000 dirs); the key stays: the run goes on.
    auto swept = capture::in_owner_ns([&]() -> base::Result<std::string> {
        return std::string(rename_temps::sweep_layer(upper, key) ? "whole" : "part");
    });
    if (swept && swept.value() == "whole") upper_dirty_ = false;
}
