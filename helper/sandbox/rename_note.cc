// A file the command renames over: the session's copy of it, about to be
// dropped by the kernel, noted first (helper/store/first_copies.h), so that
// the copy that replaces it is judged from when the session first had the
// path (docs/security.md, "When the copy was made"); and every name a
// rename or a link makes, so that a copy at a name none made was copied up
// there (docs/security.md, "A real file removed since").
#include <fcntl.h>
#include <linux/fs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <ctime>

#include "helper/base/clock.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/sandbox/rename_notify.h"
#include "helper/store/first_copies.h"
#include "helper/store/session.h"

void RenameService::note_copies(const std::string& session_dir, const std::string& target) {
    session_dir_ = session_dir;
    target_ = target;
    notes_ = std::make_unique<session::Notes>(session_dir);
    struct timespec now {};
    ::clock_gettime(CLOCK_REALTIME, &now);
    if (!notes_->moves_begin(base::time_ns(now.tv_sec, now.tv_nsec))) stop_noting();
}

// Full (8 MiB of lines): nothing more is noted, and the sets stop growing.
void RenameService::stop_noting() {
    session_dir_.clear();
    notes_.reset();
}

// The path as the task names it, made absolute from its cwd or dirfd (as
// the kernel shows them in /proc, the sandbox's view, where the target sits
// at its own path) and cleaned lexically; relative to the target, or empty
// when it is not beneath it. A path through a symlink or ".." may name
// another entry: a copy time noted for the wrong path can only make a copy
// look older, and a name made missed only makes a copy moved there look
// copied in place (a conflict, where its real file is gone).
std::string RenameService::in_target(pid_t pid, int dirfd, const std::string& path) const {
    if (session_dir_.empty() || path.empty()) return "";
    std::string abs = path;
    if (path[0] != '/') {
        std::string link = "/proc/" + std::to_string(pid) + "/" +
                           (dirfd == AT_FDCWD ? std::string("cwd") : "fd/" + std::to_string(dirfd));
        char buf[PATH_MAX];
        ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
        if (n <= 0 || static_cast<size_t>(n) >= sizeof buf || buf[0] != '/') return "";
        abs = std::string(buf, static_cast<size_t>(n)) + "/" + path;
    }
    abs = base::clean_path(abs);
    if (abs.size() <= target_.size() + 1 || abs.compare(0, target_.size(), target_) != 0 || abs[target_.size()] != '/')
        return "";
    std::string rel = abs.substr(target_.size() + 1);
    return review::safe_relpath(rel) ? rel : "";
}

void RenameService::note_replaced(const std::string& rel) {
    if (rel.empty() || noted_.count(rel)) return;
    // The live upper as it is now (a checkpoint replaces it), walked beneath
    // it without following a link.
    base::Fd upper(::open(session::upper_dir(session_dir_).c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!upper.valid()) return;
    auto [parent, name] = review::split_parent(rel);
    auto dir = review::open_dir_beneath(upper.get(), parent);
    struct statx st {};
    if (!dir || ::statx(dir->get(), name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_BTIME, &st) != 0 ||
        !(st.stx_mask & STATX_BTIME) || !(S_ISREG(st.stx_mode) || S_ISLNK(st.stx_mode)))
        return;
    if (!notes_->first_copy(rel, base::time_ns(st.stx_btime.tv_sec, st.stx_btime.tv_nsec))) return stop_noting();
    noted_.insert(rel);
}

void RenameService::note_made(const std::string& rel) {
    if (rel.empty() || made_.count(rel)) return;
    if (!notes_->moved_to(rel)) return stop_noting();
    made_.insert(rel);
}

void RenameService::note_rename(pid_t pid, int olddirfd, const std::string& oldpath, int newdirfd,
                                const std::string& newpath, unsigned flags, bool link) {
    std::string to = in_target(pid, newdirfd, newpath);
    if (!link) note_replaced(to);
    note_made(to);
    if (!(flags & RENAME_EXCHANGE) || link) return;
    std::string from = in_target(pid, olddirfd, oldpath);
    note_replaced(from);
    note_made(from);
}
