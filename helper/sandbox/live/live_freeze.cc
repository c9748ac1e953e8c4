#include "helper/sandbox/live/live_freeze.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include "helper/base/fd.h"
#include "helper/sandbox/common/sandbox.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "overlay/mountinfo.h"
#include "overlay/mounts.h"

namespace live_freeze {

namespace {

base::Result<void> reconfigure(const std::string& target, const char* flag) {
    base::Fd fs(::fspick(AT_FDCWD, target.c_str(), FSPICK_CLOEXEC));
    if (!fs.valid()) return base::sys_error("picking the overlay on " + target);
    if (::fsconfig(fs.get(), FSCONFIG_SET_FLAG, flag, nullptr, 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_CMD_RECONFIGURE, nullptr, nullptr, 0) != 0)
        return base::sys_error(std::string("remounting the overlay on ") + target + " " + flag);
    return base::Ok();
}

base::Result<base::Fd> open_in(int dirfd, const std::string& name) {
    // A real fd (not O_PATH): fsconfig(FSCONFIG_SET_FD) takes only those.
    return base::open_at(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

// The layer id a step's reference holds, read below the session's clone.
base::Result<std::string> ref_id(int session, const std::string& name) {
    TRY(base::Fd f, base::open_at(session, name, O_RDONLY | O_NOFOLLOW));
    TRY(std::string text, base::read_all(f.get(), 256));
    if (!text.empty() && text.back() == '\n') text.pop_back();
    if (!steps::valid_layer_id(text)) return base::error(name + ": not a layer reference");
    return text;
}

// "M<n> <work>[ <first>]": the top step, the work dir's name (work/<work>),
// and the stack's first layer when a squash moved it up.
base::Result<void> mount_next(const SandboxPlan& plan, Fds& fds, const std::string& req) {
    size_t sp = req.find(' ');
    int n = std::atoi(req.c_str() + 1);
    std::string wname = sp == std::string::npos ? "" : req.substr(sp + 1);
    int first = fds.first;
    if (size_t sp2 = wname.find(' '); sp2 != std::string::npos) {
        first = std::atoi(wname.c_str() + sp2 + 1);
        wname.resize(sp2);
    }
    if (n < 0 || wname.empty() || wname.size() > 24 || wname[0] == '.' || first < fds.first || first > n + 1 ||
        wname.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789.") != std::string::npos)
        return base::error("a malformed mount request");
    fds.first = first;
    std::string work = "work/" + wname;
    TRY(base::Fd upper, open_in(fds.session.get(), "upper"));
    TRY(base::Fd wk, open_in(fds.session.get(), work));
    std::vector<base::Fd> lowers;
    for (int i = n; i >= fds.first; i--) {
        char name[32];
        std::snprintf(name, sizeof name, "steps/%04d", i);
        auto l = open_in(fds.session.get(), name);
        if (!l && l.error().code == ENOENT) {
            // A step shared through the layer store (helper/store/layers/layer_store.h):
            // NNNN.ref names the layer, opened in the store's clone.
            TRY(std::string id, ref_id(fds.session.get(), std::string(name) + ".ref"));
            if (!fds.store.valid())
                return base::error("step " + std::to_string(i) + " is in the layer store, which was not open");
            l = open_in(fds.store.get(), id);
        }
        if (!l) return l.error();
        lowers.push_back(std::move(l.value()));
    }
    TRY(base::Fd target, open_in(fds.target.get(), "."));
    base::Fd fs(::fsopen("overlay", FSOPEN_CLOEXEC));
    if (!fs.valid()) return base::sys_error("fsopen overlay");
    auto set_fd = [&](const char* key, const base::Fd& fd) -> base::Result<void> {
        if (::fsconfig(fs.get(), FSCONFIG_SET_FD, key, nullptr, fd.get()) != 0)
            return base::sys_error(std::string("the next overlay's ") + key +
                                   " (layers passed by fd need Linux 6.13 or later)");
        return base::Ok();
    };
    for (const auto& l : lowers) TRY_VOID(set_fd("lowerdir+", l));
    if (fds.mask.valid()) TRY_VOID(set_fd("lowerdir+", fds.mask));
    TRY_VOID(set_fd("lowerdir+", target));
    TRY_VOID(set_fd("upperdir", upper));
    TRY_VOID(set_fd("workdir", wk));
    if (::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "userxattr", nullptr, 0) != 0 ||
        ::fsconfig(fs.get(), FSCONFIG_SET_FLAG, "volatile", nullptr, 0) != 0 ||
        (fds.mask.valid() && ::fsconfig(fs.get(), FSCONFIG_SET_STRING, "xino", "on", 0) != 0))  // overlay/options.h
        return base::sys_error("the next overlay's options");
    if (::fsconfig(fs.get(), FSCONFIG_CMD_CREATE, nullptr, nullptr, 0) != 0)
        return base::sys_error("creating the next overlay");
    base::Fd mnt(::fsmount(fs.get(), FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID));
    if (!mnt.valid()) return base::sys_error("fsmount of the next overlay");
    // The covers of the mount plan's steps 7a and 7b, on the detached tree
    // (never shown uncovered): the --ro/--rw paths inside the target (clones
    // of what is attached there now), then the hidden paths.
    const std::string& t = plan.mounts.target;
    for (const auto* list : {&plan.mounts.ro, &plan.mounts.rw})
        for (const auto& p : *list) {
            if (!overlay::path_within(p, t) || p == t) continue;
            base::Fd c(::open_tree(AT_FDCWD, p.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE));
            if (!c.valid() ||
                ::move_mount(c.get(), "", mnt.get(), p.c_str() + t.size() + 1, MOVE_MOUNT_F_EMPTY_PATH) != 0)
                return base::sys_error("showing " + p + " on the next overlay");
        }
    TRY_VOID(overlay::hide_paths_beneath(mnt.get(), t, plan.mounts.hide));
    // One step: the command's namespace sees the old view, then the new one.
    if (::move_mount(mnt.get(), "", AT_FDCWD, plan.mounts.target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) != 0)
        return base::sys_error("mounting the next overlay on " + plan.mounts.target);
    return base::Ok();
}

void answer(int fd, const base::Result<void>& r) {
    std::string m = r ? "0" : "1" + std::to_string(r.error().code) + "\t" + r.error().message;
    (void)::send(fd, m.data(), m.size(), MSG_NOSIGNAL);
}

}  // namespace

Fds open(const SandboxPlan& plan) {
    Fds f;
    std::string up = plan.mounts.upper;
    std::string session = up.substr(0, up.rfind('/'));
    // Detached clones (no submounts, outside setup's mount tree): the step
    // 8 read-only flag never reaches them, and overlayfs takes layers from
    // the root mount of a detached tree.
    auto clone = [](const std::string& p) -> base::Result<base::Fd> {
        int fd = ::open_tree(AT_FDCWD, p.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
        if (fd < 0) return base::sys_error("cloning the mount of " + p);
        return base::Fd(fd);
    };
    auto s = clone(session);
    auto t = clone(plan.mounts.target);
    if (s && t) {
        f.session = std::move(s.value());
        f.target = std::move(t.value());
        // Squashed steps below `first` have no layer (a live checkpoint's
        // squash moves it up: mount_next); shared ones live in the store.
        auto first = steps::first_layer(session);
        f.first = first ? first.value() : 1;
        // Made now if missing: a fork or rollback while the session runs
        // moves its layers there, and the next mount opens them in this clone.
        std::string store = steps::store_dir(session);
        if (::access(store.c_str(), F_OK) != 0) ::mkdir(store.c_str(), 0700);
        if (::access(store.c_str(), F_OK) == 0) {
            auto st = clone(store);
            if (st) f.store = std::move(st.value());
        }
    } else {
        f.unavailable = (s ? t.error() : s.error()).message;
    }
    return f;
}

void keep_mask(Fds& fds, const base::Fd& mask) {
    // A real fd (fsconfig's FSCONFIG_SET_FD takes no O_PATH one, which
    // fsmount gives): opened now, it names the mask once attached.
    if (mask.valid()) fds.mask.reset(::openat(mask.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

base::Result<void> share_target(const SandboxPlan& plan) {
    if (::mount(nullptr, plan.mounts.target.c_str(), nullptr, MS_SHARED, nullptr) != 0)
        return base::sys_error("making the overlay on " + plan.mounts.target + " shared");
    return base::Ok();
}

bool serve_one(const SandboxPlan& plan, Fds& fds, int ctl) {
    char buf[64];
    ssize_t n;
    while ((n = ::recv(ctl, buf, sizeof buf, 0)) < 0 && errno == EINTR) {
    }
    if (n <= 0) return n < 0 && errno == EAGAIN;  // the supervisor is gone or serves no more
    std::string req(buf, static_cast<size_t>(n));
    if (!fds.unavailable.empty())
        answer(ctl, base::error("the checkpoint of this running session is unavailable: " + fds.unavailable));
    else if (req == "R") answer(ctl, reconfigure(plan.mounts.target, "ro"));
    else if (req == "W") answer(ctl, reconfigure(plan.mounts.target, "rw"));
    else if (req[0] == 'M') answer(ctl, mount_next(plan, fds, req));
    else answer(ctl, base::error("unknown request"));
    return true;
}

}  // namespace live_freeze
