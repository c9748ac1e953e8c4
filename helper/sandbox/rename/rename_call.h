// Directory renames in the sandbox (docs/design.md, "Directory renames"):
// the pure part. A notified rename/renameat/renameat2 is decoded into a
// RenameCall, sent to the rename worker as one message (fds ride along as
// SCM_RIGHTS), and the worker's answer comes back as a RenameReply.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rename_call {

// The syscalls the filter hands to the supervisor (names as libseccomp knows
// them): the renames, and the links (noted only).
const std::vector<const char*>& notified_syscalls();

// The arguments of one notified call, as the task passed them.
struct Args {
    int olddirfd = 0;      // AT_FDCWD for rename(2)
    uint64_t oldpath = 0;  // addresses in the task's memory
    int newdirfd = 0;
    uint64_t newpath = 0;
    unsigned flags = 0;
};

// nr is a native syscall number; nullopt when it is not one of ours.
std::optional<Args> decode(int nr, const uint64_t args[6]);
// link(2), linkat(2): in a kept session, the name made and the entry
// replaced (a whiteout) noted (helper/sandbox/rename/rename_note.cc), and the call
// made by the worker on the dir resolved for that; flags: linkat's.
std::optional<Args> decode_link(int nr, const uint64_t args[6]);

// A link's source as the worker can reach it: `/proc/self/...` (and
// `thread-self`) name the task, never the worker, and AT_EMPTY_PATH links the
// fd itself, which the kernel lets only its opener's credentials do. Both
// become the same path in the sandbox's /proc with the task's own numbers
// (`/proc/TGID/...`, `/proc/TGID/task/TID/...`, `/proc/TID/fd/N`), which the
// worker resolves from the root it shares with the task, as the kernel would
// for the task: a `..` after them stays in the sandbox's /proc and its tree.
// (The host's /proc/PID dir, which the supervisor sees, is not that: its
// `..` is the host's /proc and /, where the worker looked up the host's pids
// and files for the sandbox, their existence told by EXDEV: attack19.)
// AT_EMPTY_PATH: followed (AT_SYMLINK_FOLLOW through the magic link: the
// same file). nullopt: the source is an ordinary path, resolved from the
// task's dirfd as it is.
struct LinkSource {
    std::string path;  // absolute, in the task's /proc
    unsigned flags;
};
// The task's numbers in its own pid namespace (the last fields of NStgid and
// NSpid in /proc/PID/status as the supervisor reads it); nullopt: none there.
struct TaskIds {
    long tgid = 0, tid = 0;
};
std::optional<TaskIds> task_ids(const std::string& status);
// Whether proc_link_source applies (and the task's ids are needed).
bool own_proc_source(const std::string& oldpath, unsigned flags);
std::optional<LinkSource> proc_link_source(int olddirfd, const std::string& oldpath, unsigned flags,
                                           const TaskIds& ids);

// What the worker needs: the paths as read once from the task's memory and
// whether each is resolved from a passed dirfd (else: absolute, from root).
struct Request {
    uint64_t id = 0;  // the notification's id, echoed in the reply
    unsigned flags = 0;
    bool old_fd = false, new_fd = false;  // a dirfd rides along for it
    std::string oldpath, newpath;
    bool plain = false;  // a file's rename (never emulated), on the dirs the supervisor resolved
    bool link = false;   // a kept session's link: linkat(olddir, oldpath, newdir, newpath, flags)
    // A call whose worker died with it in hand: its successor removes the
    // temporary copy it may have left (rename_tree::drop_temp), answers EXDEV.
    bool sweep = false;
};
std::string encode(const Request& r);
std::optional<Request> decode_request(const std::string& msg);

struct Reply {
    uint64_t id = 0;
    int err = 0;  // 0 or a positive errno
};
std::string encode(const Reply& r);
std::optional<Reply> decode_reply(const std::string& msg);

// "a/b/src/" -> {"a/b", "src"}; "src" -> {".", "src"}; "/src" -> {"/", "src"}.
// Trailing slashes are dropped, as rename(2) allows them on directories.
struct Split {
    std::string parent, name;
};
Split split(const std::string& path);

// The supervisor answers CONTINUE (the kernel runs the call itself, with
// the task's own rights) unless the source may be a directory the overlay
// refuses to move: a stat that found no directory, or an exchange (which
// the worker would not emulate either), is enough to let it through.
bool may_need_emulation(unsigned flags, bool source_is_dir);

}  // namespace rename_call
