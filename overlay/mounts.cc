#include "overlay/mounts.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "overlay/devfs.h"
#include "overlay/mask.h"
#include "overlay/mountinfo.h"
#include "overlay/options.h"

namespace overlay {

namespace {

// The private tmpfs mounts. /run is masked because that is where the host's
// daemons listen (D-Bus, systemd, docker, the user's runtime dir).
struct PrivateTmp {
    const char* path;
    bool sized;                 // sized by --tmp-size (a dir of Handles::tmp); otherwise tiny
    bool writable;              // cleared of read-only in step 8
    const char* dir = nullptr;  // its dir in Handles::tmp
};
const PrivateTmp kPrivate[] = {
    {"/tmp", true, true, "tmp"}, {"/var/tmp", true, true, "var-tmp"}, {"/run", false, false}};

bool is_real_dir(const char* path) {
    struct stat st;
    return ::lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

base::Result<void> mkdir_p(const std::string& path) {
    std::string cur;
    size_t pos = 1;
    while (pos <= path.size()) {
        size_t next = path.find('/', pos);
        if (next == std::string::npos) next = path.size();
        cur = path.substr(0, next);
        if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return base::sys_error("creating " + cur);
        pos = next + 1;
    }
    return base::Ok();
}

base::Result<base::Fd> clone_tree(const std::string& path, bool recursive) {
    unsigned flags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | (recursive ? AT_RECURSIVE : 0);
    int fd = ::open_tree(AT_FDCWD, path.c_str(), flags);
    if (fd < 0) return base::sys_error("cloning mount " + path);
    return base::Fd(fd);
}

std::string fd_path(const base::Fd& fd) { return "/proc/self/fd/" + std::to_string(fd.get()); }

base::Result<void> set_attr(const char* path, unsigned flags, uint64_t set, uint64_t clr) {
    struct mount_attr attr = {};
    attr.attr_set = set;
    attr.attr_clr = clr;
    if (::mount_setattr(AT_FDCWD, path, flags, &attr, sizeof attr) != 0)
        return base::sys_error(std::string("changing mount flags of ") + path);
    return base::Ok();
}

}  // namespace

base::Result<void> make_private() {
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
        return base::sys_error("making / recursively private");
    return base::Ok();
}

namespace {

base::Result<base::Fd> open_dir(const std::string& p, const char* what) {
    auto fd = base::open_at(AT_FDCWD, p, O_PATH | O_DIRECTORY | O_NOFOLLOW);
    if (!fd) return fd.error().context(std::string("opening the ") + what);
    return fd;
}

}  // namespace

base::Result<Handles> open_host_handles(const MountPlan& plan) {
    Handles h;
    TRY(h.lower, open_dir(plan.target, "target"));
    TRY(h.state, open_dir(plan.state_dir, "state dir"));
    std::vector<std::string> subs;
    if (plan.submounts) {
        subs = *plan.submounts;
    } else {
        auto info = base::open_at(AT_FDCWD, "/proc/self/mountinfo", O_RDONLY);
        if (!info) return info.error();
        TRY(std::string text, base::read_all(info->get(), 64 << 20));
        subs = submounts_under(parse_mountinfo(text), plan.target);
    }
    for (const auto& mp : subs) {
        auto c = clone_tree(mp, true);
        if (!c) {
            h.warnings.push_back(mp + " is a separate mount that cannot be shown inside (" + c.error().message +
                                 "); it appears as an empty directory");
            continue;
        }
        h.warnings.push_back(mp + " is a separate mount: visible read-only inside, changes there are not captured");
        h.submounts.emplace_back(mp, std::move(c.value()));
    }
    for (const char* const* n = kDevNodes; *n; n++) {
        std::string p = std::string("/dev/") + *n;
        if (::access(p.c_str(), F_OK) != 0) continue;  // e.g. no /dev/tty in some containers
        TRY(base::Fd c, clone_tree(p, false));
        h.dev_nodes.emplace_back(*n, std::move(c));
    }
    for (const auto& s : plan.scratch) {
        Handles::ScratchFds f;
        TRY(f.lower, open_dir(s.root, "scratch root"));
        h.scratch.push_back(std::move(f));
    }
    for (const auto& r : plan.read_only) {
        Handles::ScratchFds f;
        TRY(f.lower, open_dir(r, "read-only root"));
        h.read_only.push_back(std::move(f));
    }
    for (const auto* list : {&plan.ro, &plan.rw})
        for (const auto& p : *list) {
            TRY(base::Fd c, clone_tree(p, true));
            h.shown.emplace_back(p, std::move(c));
        }
    if (plan.host_network && is_real_dir("/run/systemd/resolve")) {
        // /etc/resolv.conf often points into it; the rest of /run stays hidden.
        auto c = clone_tree("/run/systemd/resolve", false);
        if (c) h.resolv = std::move(c.value());
    }
    return h;
}

base::Result<void> open_session_handles(const MountPlan& plan, Handles& h) {
    TRY(h.upper, open_dir(plan.upper, "session's upper layer"));
    TRY(h.work, open_dir(plan.work, "session's work dir"));
    for (const auto& st : plan.steps) {
        TRY(base::Fd fd, open_dir(st, "session's step layer"));
        h.steps.push_back(std::move(fd));
    }
    for (size_t i = 0; i < plan.scratch.size() && i < h.scratch.size(); i++) {
        TRY(h.scratch[i].upper, open_dir(plan.scratch[i].upper, "scratch upper layer"));
        TRY(h.scratch[i].work, open_dir(plan.scratch[i].work, "scratch work dir"));
    }
    return base::Ok();
}

base::Result<void> build_masks(const MountPlan& plan, Handles& h) {
    if (plan.missing.empty()) return base::Ok();
    std::vector<std::string> roots{plan.target};
    for (const auto& s : plan.scratch) roots.push_back(s.root);
    for (const auto& r : plan.read_only) roots.push_back(r);
    TRY(h.mask, build_mask(h.lower.get(), mask_rels(plan.target, roots, plan.missing)));
    for (size_t i = 0; i < plan.scratch.size() && i < h.scratch.size(); i++) {
        auto& f = h.scratch[i];
        TRY(f.mask, build_mask(f.lower.get(), mask_rels(plan.scratch[i].root, roots, plan.missing)));
    }
    for (size_t i = 0; i < plan.read_only.size() && i < h.read_only.size(); i++) {
        auto& f = h.read_only[i];
        TRY(f.mask, build_mask(f.lower.get(), mask_rels(plan.read_only[i], roots, plan.missing)));
    }
    return base::Ok();
}

namespace {

// The mask goes where its overlay will (the overlay then covers it): a
// layer must be a path in our mount namespace, and before Linux 6.15 a
// detached mount is not. Its fd then names the attached tree.
base::Result<void> attach_mask(const base::Fd& mask, const std::string& root) {
    if (mask.valid() && ::move_mount(mask.get(), "", AT_FDCWD, root.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return base::sys_error("masking missing hidden paths below " + root);
    return base::Ok();
}

// An overlay the kernel refused: its mask must not stay in its place.
void detach_mask(const base::Fd& mask, const std::string& root) {
    if (mask.valid()) (void)::umount2(root.c_str(), MNT_DETACH);
}

// The real tree's layers: the mask (if any) over the real dir.
std::vector<std::string> real_layers(const base::Fd& mask, const base::Fd& real) {
    std::vector<std::string> v;
    if (mask.valid()) v.push_back(fd_path(mask));
    v.push_back(fd_path(real));
    return v;
}

}  // namespace

base::Result<void> bind_private_tmp(Handles& h, const char* name, const char* path) {
    if (!h.tmp.valid()) return base::error(std::string("mounting a private ") + path + ": no tmpfs made");
    if (::mkdirat(h.tmp.get(), name, 0) != 0 && errno != EEXIST)
        return base::sys_error(std::string("mounting a private ") + path);
    // mkdir's mode passes the umask: the sticky, world-writable mode is set apart.
    if (::fchmodat(h.tmp.get(), name, 01777, 0) != 0) return base::sys_error(std::string("mounting a private ") + path);
    base::Fd dir(::open_tree(h.tmp.get(), name, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
    if (!dir.valid() || ::move_mount(dir.get(), "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return base::sys_error(std::string("mounting a private ") + path);
    return base::Ok();
}

base::Result<void> mount_private_tmp(const MountPlan& plan, Handles& h) {
    // One sized tmpfs, detached: each private dir is a dir of it bound in
    // place, so /tmp, /var/tmp and /dev/shm share --tmp-size. Three mounts of
    // that size each let a command hold three times the budget in RAM,
    // charged to no process (found by attack17). Its inodes by its size too
    // (tmp_inodes: attack38).
    base::Fd fs(::fsopen("tmpfs", FSOPEN_CLOEXEC));
    std::string size = std::to_string(plan.tmp_size), inodes = std::to_string(tmp_inodes(plan.tmp_size));
    if (!fs.valid() || ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "mode", "0755", 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "size", size.c_str(), 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "nr_inodes", inodes.c_str(), 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        return base::sys_error("making the private /tmp");
    h.tmp = base::Fd(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV));
    if (!h.tmp.valid()) return base::sys_error("making the private /tmp");
    for (const auto& t : kPrivate) {
        if (!is_real_dir(t.path)) continue;
        if (t.sized) {
            TRY_VOID(bind_private_tmp(h, t.dir, t.path));
        } else if (::mount("tmpfs", t.path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") != 0) {
            return base::sys_error(std::string("mounting a private ") + t.path);
        }
        // The real path is covered now: recreate the target's path so the
        // overlay (whose layers we hold by fd) can be mounted there.
        if (path_within(plan.target, t.path)) TRY_VOID(mkdir_p(plan.target));
        if (path_within(plan.state_dir, t.path) && !path_within(plan.state_dir, plan.target)) {
            // Hidden by this tmpfs already; nothing to do.
        }
    }
    return base::Ok();
}

base::Result<void> mount_scratch(const MountPlan& plan, Handles& h) {
    for (size_t i = 0; i < plan.scratch.size(); i++) {
        const auto& s = plan.scratch[i];
        const auto& f = h.scratch[i];
        TRY_VOID(attach_mask(f.mask, s.root));
        std::string opts =
            overlay_options(real_layers(f.mask, f.lower), fd_path(f.upper), fd_path(f.work), f.mask.valid());
        if (::mount("overlay", s.root.c_str(), "overlay", MS_NOSUID, opts.c_str()) != 0) {
            int err = errno;
            detach_mask(f.mask, s.root);
            errno = err;
            h.warnings.push_back(s.root + " stays read-only (" + base::sys_error("a scratch overlay", errno).message +
                                 "; other filesystems mounted below it?)");
            continue;
        }
        h.scratch_up.push_back(s.root);
    }
    for (size_t i = 0; i < plan.read_only.size() && i < h.read_only.size(); i++) {
        const auto& f = h.read_only[i];
        if (!f.mask.valid()) continue;  // nothing missing below it: the real dir, as it is
        const std::string& root = plan.read_only[i];
        TRY_VOID(attach_mask(f.mask, root));
        std::string opts = read_only_options(real_layers(f.mask, f.lower));
        if (::mount("overlay", root.c_str(), "overlay", MS_NOSUID | MS_RDONLY, opts.c_str()) != 0) {
            int err = errno;
            detach_mask(f.mask, root);
            h.warnings.push_back(root + ": " + base::sys_error("a read-only overlay", err).message +
                                 " (other filesystems mounted below it?); a hidden path missing there now shows "
                                 "inside if it is made while the command runs");
        }
    }
    return base::Ok();
}

base::Result<void> make_scratch_writable(const Handles& h) {
    for (const auto& r : h.scratch_up) TRY_VOID(set_attr(r.c_str(), 0, 0, MOUNT_ATTR_RDONLY));
    return base::Ok();
}

namespace {

// The new mount API: one fsconfig call per lower layer, no option-length
// limit. ENOSYS/EINVAL (no "lowerdir+" before 6.8): false, use the string.
base::Result<bool> mount_stack_fsconfig(const MountPlan& plan, const Handles& h) {
    base::Fd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
    if (!fs.valid()) return false;
    auto set = [&](const char* key, const std::string& value) {
        return ::fsconfig(fs.get(), FSCONFIG_SET_STRING, key, value.c_str(), 0) == 0;
    };
    for (const auto& st : h.steps)
        if (!set("lowerdir+", fd_path(st))) return false;
    for (const auto& l : real_layers(h.mask, h.lower))
        if (!set("lowerdir+", l)) return false;
    if (!set("upperdir", fd_path(h.upper)) || !set("workdir", fd_path(h.work))) return false;
    if (::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "volatile", nullptr, 0) != 0 ||
        (h.mask.valid() && !set("xino", "on")))  // overlay_options' xino
        return false;
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0) return false;
    base::Fd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID));
    if (!mnt.valid()) return false;
    if (::move_mount(mnt.get(), "", AT_FDCWD, plan.target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return base::sys_error("mounting the overlay on " + plan.target);
    return true;
}

}  // namespace

base::Result<void> mount_overlay(const MountPlan& plan, const Handles& h) {
    TRY_VOID(attach_mask(h.mask, plan.target));
    std::vector<std::string> lowers;
    for (const auto& st : h.steps) lowers.push_back(fd_path(st));
    if (!h.steps.empty()) {
        TRY(bool done, mount_stack_fsconfig(plan, h));
        if (done) return base::Ok();
    }
    for (auto& l : real_layers(h.mask, h.lower)) lowers.push_back(std::move(l));
    std::string opts = overlay_options(lowers, fd_path(h.upper), fd_path(h.work), h.mask.valid());
    if (::mount("overlay", plan.target.c_str(), "overlay", MS_NOSUID, opts.c_str()) != 0) {
        int err = errno;
        std::string msg = base::sys_error("mounting the overlay on " + plan.target, err).message;
        if (err == EINVAL && !h.submounts.empty())
            // Since the CVE-2021-3732 fix, overlayfs refuses a lower layer
            // with locked mounts below it, and every host mount is locked in
            // an unprivileged user namespace: no workaround exists.
            msg = "cannot overlay " + plan.target + ": other filesystems are mounted below it (" +
                  h.submounts.front().first + (h.submounts.size() > 1 ? ", ..." : "") +
                  ") and the kernel refuses an unprivileged overlay over them; pick a --target with no "
                  "mounts below it (see 'layover doctor --target')";
        else if (err == EINVAL || err == EOPNOTSUPP)
            msg +=
                "; the state dir's filesystem may lack user.* xattrs (tmpfs before Linux 6.6): set "
                "LAYOVER_STATE_DIR to a dir on ext4/xfs/btrfs, and run 'layover doctor'";
        else if (err == EPERM)
            msg +=
                "; this kernel does not allow overlayfs in a user namespace (needs Linux 5.11+): run 'layover doctor'";
        return base::error(msg);
    }
    return base::Ok();
}

base::Result<void> attach_submounts(const MountPlan& plan, Handles& h) {
    (void)plan;
    for (auto& [path, clone] : h.submounts) {
        if (::move_mount(clone.get(), "", AT_FDCWD, path.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
            return base::sys_error("re-attaching submount " + path);
        clone.reset();
    }
    return base::Ok();
}

base::Result<void> mask_host_state(const MountPlan& plan, Handles& h) {
    if (h.resolv.valid()) {
        TRY_VOID(mkdir_p("/run/systemd/resolve"));
        if (::move_mount(h.resolv.get(), "", AT_FDCWD, "/run/systemd/resolve", MOVE_MOUNT_F_EMPTY_PATH) != 0)
            return base::sys_error("showing /run/systemd/resolve");
        h.resolv.reset();
    }
    // The state dir holds every session's upper layer: if some mount still
    // shows it (it was not under /tmp, /var/tmp or /run), cover it.
    struct stat real, seen;
    if (::fstat(h.state.get(), &real) != 0) return base::sys_error("state dir");
    if (::stat(plan.state_dir.c_str(), &seen) == 0 && seen.st_dev == real.st_dev && seen.st_ino == real.st_ino) {
        if (::mount("tmpfs", plan.state_dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_RDONLY,
                    "mode=000,size=4k") != 0)
            return base::sys_error("hiding the state dir " + plan.state_dir);
    }
    return base::Ok();
}

base::Result<void> make_rest_readonly(const MountPlan& plan) {
    TRY_VOID(set_attr("/", AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID, 0));
    // Non-recursive: submounts re-attached on the overlay stay read-only.
    TRY_VOID(set_attr(plan.target.c_str(), 0, 0, MOUNT_ATTR_RDONLY));
    for (const auto& t : kPrivate)
        if (t.writable && is_real_dir(t.path)) TRY_VOID(set_attr(t.path, 0, 0, MOUNT_ATTR_RDONLY));
    TRY_VOID(set_attr("/dev/shm", 0, 0, MOUNT_ATTR_RDONLY));
    for (const auto& p : plan.rw) TRY_VOID(set_attr(p.c_str(), 0, 0, MOUNT_ATTR_RDONLY));
    TRY_VOID(set_attr("/dev/pts", 0, 0, MOUNT_ATTR_RDONLY));
    return base::Ok();
}

base::Result<void> mount_proc() {
    if (::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0) {
        int err = errno;
        std::string msg = base::sys_error("mounting a fresh /proc", err).message;
        if (err == EPERM)
            msg +=
                "; the host's /proc is partly hidden (as in some containers), so the kernel refuses a new "
                "one: run 'layover doctor'";
        return base::error(msg);
    }
    return base::Ok();
}

}  // namespace overlay
