// The mount plan, run by the setup process inside its new user+mount
// namespace. Each step is one function; helper/setup.cc calls them in order.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace overlay {

struct MountPlan {
    std::string target;     // absolute, symlink-free
    std::string upper;      // session upper dir
    std::string work;       // fresh overlay workdir
    std::string state_dir;  // must not be reachable from inside
    bool host_network = false;
    unsigned long long tmp_size = 0;
    std::vector<std::string> hide;  // absolute paths made unreadable (helper/sandbox/policy/hide.h)
    std::vector<std::string> ro;    // host paths shown read-only at the same path (--ro)
    std::vector<std::string> rw;    // host paths writable, pass-through (--rw)
    struct Scratch {
        std::string root, upper, work;  // an overlay over root, never applied (helper/sandbox/policy/scratch.h)
    };
    std::vector<Scratch> scratch;
    std::vector<std::string> steps;  // the session's frozen steps, topmost first (lowers above the target)
    // Mounts below the target, as the supervisor's read of mountinfo found
    // them just before (issue 20: setup's own read was ~0.15 ms of its
    // critical path); unset: open_host_handles reads mountinfo itself.
    std::optional<std::vector<std::string>> submounts;
    std::vector<std::string> missing;  // hidden paths missing on the host, kept missing (overlay/mask.h)
    // Read-only roots (--home ro): a read-only overlay of the real dir under
    // its mask, where it has one (step 3b).
    std::vector<std::string> read_only;
};

// Everything opened before any mount hides it.
struct Handles {
    base::Fd lower, upper, work, state;
    std::vector<base::Fd> steps;                              // per MountPlan::steps
    std::vector<std::pair<std::string, base::Fd>> submounts;  // (path, detached clone)
    std::vector<std::pair<std::string, base::Fd>> dev_nodes;  // ("null", clone of /dev/null), ...
    base::Fd resolv;                                          // clone of /run/systemd/resolve (host network only)
    std::vector<std::pair<std::string, base::Fd>> shown;      // clones of the --ro and --rw paths
    base::Fd mask;                                            // the target's mask (overlay/mask.h), or invalid
    base::Fd tmp;  // the one sized tmpfs (detached) whose dirs are /tmp, /var/tmp and /dev/shm
    struct ScratchFds {
        base::Fd lower, upper, work, mask;
    };
    std::vector<ScratchFds> scratch;      // per MountPlan::scratch entry
    std::vector<ScratchFds> read_only;    // per MountPlan::read_only entry (lower and mask only)
    std::vector<std::string> scratch_up;  // roots whose scratch overlay is mounted
    std::vector<std::string> warnings;
};

// 1. Stop our mounts propagating back to the host (and vice versa).
base::Result<void> make_private();
// 2. Open the layers, the state dir, detached clones of submounts under the
//    target and of the host device nodes, before any mount covers them: what
//    lies outside the session first (setup does it while a new session's
//    dirs are still being made), then the session's own layers.
base::Result<Handles> open_host_handles(const MountPlan& plan);
base::Result<void> open_session_handles(const MountPlan& plan, Handles& h);
// 2b. The masks that keep hidden paths missing on the host missing inside
//     (overlay/mask.h): one per overlay with such a path below its root,
//     the lower layer just above the real tree. Made while the supervisor
//     makes a new session's dirs; needs only the real trees' fds.
base::Result<void> build_masks(const MountPlan& plan, Handles& h);
// 3. Private, size-limited tmpfs on /tmp and /var/tmp; if the target lies
//    below one of them, recreate its path inside the new tmpfs. They and
//    /dev/shm (step 6) are dirs of one tmpfs of --tmp-size (h.tmp), bound
//    in place: one budget for the three, not three (attack17).
base::Result<void> mount_private_tmp(const MountPlan& plan, Handles& h);
// A dir of h.tmp (made on first use, mode 1777) bound on path.
base::Result<void> bind_private_tmp(Handles& h, const char* name, const char* path);
// 3b. A scratch overlay on each scratch root (before the target's overlay,
//     which may lie below one and then goes on top). A root the kernel
//     refuses (host mounts below it) stays read-only, with a warning. A
//     read-only root with a mask gets a read-only overlay of its mask over
//     the real dir (no upper layer); one the kernel refuses stays the real
//     dir, with a warning that hidden paths made there meanwhile show.
base::Result<void> mount_scratch(const MountPlan& plan, Handles& h);
// 4. The overlay on the target, layers passed by fd (/proc/self/fd/N), so
//    it works even where step 3 covered the real paths. With frozen steps,
//    lowerdir = step N : ... : step 1 : target, each layer added by
//    fsconfig("lowerdir+") where the kernel has it (6.8+), else in one
//    option string (short fd paths: ~17 bytes a layer, within one page).
base::Result<void> mount_overlay(const MountPlan& plan, const Handles& h);
// 5. Re-attach the submount clones on top of the overlay (read-only later).
base::Result<void> attach_submounts(const MountPlan& plan, Handles& h);
// 6. Minimal /dev (see devfs.h).
// 7. Hide host state: an empty tmpfs over /run (daemon sockets: D-Bus,
//    systemd, docker, user runtime dir), and over the state dir if any mount
//    still shows it.
base::Result<void> mask_host_state(const MountPlan& plan, Handles& h);
// 7a. Attach the --ro and --rw clones at their own paths (creating the
//     mount point inside a private tmpfs where needed).
base::Result<void> attach_shown(const MountPlan& plan, Handles& h);
// 7b. Cover each hidden path: a dir with an empty read-only tmpfs, a file
//     with an empty read-only file. Opened without following symlinks, so a
//     link planted in a resumed session's upper layer cannot redirect it.
base::Result<void> hide_paths(const MountPlan& plan);
// The same for a tree not attached anywhere yet (the next overlay of a
// checkpoint, helper/sandbox/live/live_freeze.cc): each of `hide` below
// root_path, resolved beneath the fd `root` (which stands for root_path).
base::Result<void> hide_paths_beneath(int root, const std::string& root_path, const std::vector<std::string>& hide);
// 8. Everything read-only (mount_setattr, recursive; a plain MS_REMOUNT
//    fails on locked mounts), then writable again: the overlay and the
//    private tmpfs mounts only.
base::Result<void> make_rest_readonly(const MountPlan& plan);
// 8b. The mounted scratch overlays writable again (their own mounts only).
base::Result<void> make_scratch_writable(const Handles& h);
// Run by init, inside the new PID namespace: a fresh /proc.
base::Result<void> mount_proc();

}  // namespace overlay
