// A file the command renames over: the session's copy of it, about to be
// dropped by the kernel, noted first (helper/store/first_copies.h), so that
// the copy that replaces it is judged from when the session first had the
// path (docs/security.md, "When the copy was made").
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>

#include "helper/base/clock.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/sandbox/rename_notify.h"
#include "helper/store/first_copies.h"
#include "helper/store/session.h"

void RenameService::note_copies(const std::string& session_dir, const std::string& target) {
    session_dir_ = session_dir;
    target_ = target;
}

// The path as the task names it, made absolute from its cwd or dirfd (as
// the kernel shows them in /proc, the sandbox's view, where the target sits
// at its own path) and cleaned lexically. A path through a symlink or ".."
// may name another entry: only a copy time is noted, for the session's own
// judgement, and a wrong one can only make a copy look older (a conflict).
void RenameService::note_replaced(pid_t pid, int dirfd, const std::string& path) {
    if (session_dir_.empty() || path.empty()) return;
    std::string abs = path;
    if (path[0] != '/') {
        std::string link = "/proc/" + std::to_string(pid) + "/" +
                           (dirfd == AT_FDCWD ? std::string("cwd") : "fd/" + std::to_string(dirfd));
        char buf[PATH_MAX];
        ssize_t n = ::readlink(link.c_str(), buf, sizeof buf);
        if (n <= 0 || static_cast<size_t>(n) >= sizeof buf || buf[0] != '/') return;
        abs = std::string(buf, static_cast<size_t>(n)) + "/" + path;
    }
    abs = base::clean_path(abs);
    if (abs.size() <= target_.size() + 1 || abs.compare(0, target_.size(), target_) != 0 || abs[target_.size()] != '/')
        return;
    std::string rel = abs.substr(target_.size() + 1);
    if (!review::safe_relpath(rel) || noted_.count(rel)) return;
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
    // Full (8 MiB of lines): nothing more is noted, and the set stops growing.
    if (!session::note_first_copy(session_dir_, rel, base::time_ns(st.stx_btime.tv_sec, st.stx_btime.tv_nsec)))
        session_dir_.clear();
    noted_.insert(rel);
}
