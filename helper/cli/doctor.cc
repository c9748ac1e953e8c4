// `layover doctor [--target DIR]`: one line per requirement, OK or FAIL with
// the fix. The same probes explain `run`'s failures.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>

#include "helper/base/child.h"
#include "helper/base/text.h"
#include "helper/cli/verbs.h"
#include "helper/sandbox/landlock.h"
#include "helper/sandbox/prepare.h"
#include "helper/sandbox/seccomp.h"
#include "helper/store/remove.h"
#include "helper/store/session.h"
#include "helper/store/userns.h"
#include "overlay/mountinfo.h"

namespace {

std::string sysctl(const char* path) {
    std::ifstream f(path);
    std::string v;
    if (f) std::getline(f, v);
    return v;
}

// Run probe in a forked child (namespaces must not touch us); true if it returns 0.
bool in_child(const std::function<int()>& probe) {
    auto c = base::spawn(probe);
    if (!c) return false;
    auto st = c->wait();
    return st && base::exit_code_of(st.value()) == 0;
}

int report(bool ok, const std::string& what, const std::string& fix) {
    if (ok) std::printf("OK    %s\n", what.c_str());
    else std::printf("FAIL  %s: %s\n", what.c_str(), fix.c_str());
    return ok ? 0 : 1;
}

// Entries of a tree not owned by the caller: copying them up fails with
// EOVERFLOW (their owner is not mapped in the sandbox's user namespace).
void list_foreign(const std::string& root, int dirfd, const std::string& rel, dev_t dev, int* count) {
    DIR* d = ::fdopendir(dirfd);
    if (!d) {
        ::close(dirfd);
        return;
    }
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n == "." || n == "..") continue;
        struct stat st;
        if (::fstatat(::dirfd(d), n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
        std::string p = rel.empty() ? n : rel + "/" + n;
        if (st.st_uid != ::geteuid()) {
            if (++*count <= 20)
                std::printf("      not yours (uid %u): %s/%s\n", st.st_uid, root.c_str(),
                            base::display_path(p).c_str());
        }
        if (S_ISDIR(st.st_mode) && st.st_dev == dev) {
            int sub = ::openat(::dirfd(d), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) list_foreign(root, sub, p, dev, count);
        }
    }
    ::closedir(d);
}

}  // namespace

int cmd_doctor(int argc, char** argv) {
    std::string target;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--target" && i + 1 < argc) target = argv[++i];
        else if (a.rfind("--target=", 0) == 0) target = a.substr(9);
        else if (a == "-h" || a == "--help") {
            std::puts("usage: layover doctor [--target DIR]");
            return 0;
        } else {
            std::fprintf(stderr, "layover doctor: unknown option '%s'; see 'layover doctor --help'\n", a.c_str());
            return 2;
        }
    }
    int fails = 0;
    std::string clone = sysctl("/proc/sys/kernel/unprivileged_userns_clone");
    std::string maxns = sysctl("/proc/sys/user/max_user_namespaces");
    fails += report(clone != "0" && maxns != "0", "unprivileged user namespaces enabled",
                    clone == "0" ? "sudo sysctl -w kernel.unprivileged_userns_clone=1"
                                 : "sudo sysctl -w user.max_user_namespaces=15000");
    std::string aa = sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    fails += report(aa != "1", "AppArmor allows unprivileged user namespaces",
                    "sudo sysctl -w kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 23.10+), or add an "
                    "AppArmor profile allowing userns for layover");
    bool userns_ok = in_child([] { return userns::enter_owner_ns().ok() ? 0 : 1; });
    fails +=
        report(userns_ok, "a user namespace can be created", "see the two lines above; 'unshare -r true' must work");

    auto state = session::state_dir();
    fails += report(state.ok(), "state dir usable" + (state ? " (" + state.value() + ")" : std::string()),
                    state ? "" : state.error().message);
    if (state) {
        std::string probe = state.value() + "/.doctor-" + std::to_string(::getpid());
        ::mkdir(probe.c_str(), 0700);
        std::string f = probe + "/x";
        int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
        if (fd >= 0) ::close(fd);
        bool xattr_ok = ::setxattr(f.c_str(), "user.layover.probe", "1", 1, 0) == 0;
        fails += report(
            xattr_ok, "state dir supports user.* xattrs",
            "its filesystem lacks them (tmpfs before Linux 6.6?): set LAYOVER_STATE_DIR to a dir on ext4/xfs/btrfs");
        for (const char* d : {"/lower", "/upper", "/work", "/merged"}) ::mkdir((probe + d).c_str(), 0700);
        bool ovl = userns_ok && in_child([&] {
                       if (!userns::enter_owner_ns() || ::unshare(CLONE_NEWNS) != 0) return 1;
                       std::string o = "lowerdir=" + probe + "/lower,upperdir=" + probe + "/upper,workdir=" + probe +
                                       "/work,userxattr";
                       return ::mount("overlay", (probe + "/merged").c_str(), "overlay", 0, o.c_str()) == 0 ? 0 : 1;
                   });
        fails += report(ovl, "overlayfs mounts with userxattr in a user namespace",
                        "needs Linux 5.11+ and user.* xattrs on the state dir's filesystem");
        (void)remove_tree_fast(probe);
    }
    bool proc_ok =
        userns_ok && in_child([] {
            if (!userns::enter_owner_ns() || ::unshare(CLONE_NEWNS | CLONE_NEWPID) != 0) return 1;
            if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 1;
            pid_t p = ::fork();
            if (p == 0)
                ::_exit(::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0 : 1);
            int st = 0;
            ::waitpid(p, &st, 0);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        });
    fails += report(proc_ok, "a fresh /proc can be mounted",
                    "the host's /proc is partly hidden (as in some containers); run layover on the host or in a "
                    "container started with an unmasked /proc");

    // The command's seccomp filter is required (run refuses to start without
    // it); Landlock is optional and only informational.
    bool filter_ok = seccomp::kernel_supports() && in_child([] {
                         if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 1;
                         return seccomp::install(default_seccomp_rules()).ok() ? 0 : 1;
                     });
    fails +=
        report(filter_ok, "seccomp filters load (the command's syscall filter)",
               "the kernel lacks seccomp filtering (CONFIG_SECCOMP_FILTER) or SECCOMP_RET_KILL_PROCESS (Linux 4.14+)");
    if (seccomp::notify_supported())
        std::printf("OK    seccomp user notification: renaming a directory that existed before the session works\n");
    else
        std::printf(
            "INFO  no seccomp user notification (Linux 5.5+): renaming a directory that existed before the "
            "session fails with EXDEV (coreutils mv still works)\n");
    int ll = landlock::abi_version();
    if (ll >= 6)
        std::printf("OK    Landlock ABI %d: abstract unix sockets of the host are closed with --network host\n", ll);
    else
        std::printf(
            "INFO  Landlock ABI %d (6 needed, Linux 6.12+): with --network host the host's abstract unix "
            "sockets stay reachable\n",
            ll);

    if (target.empty()) {
        const char* home = std::getenv("HOME");
        target = home ? home : "";
    }
    auto t = resolve_target(target.empty() ? "." : target);
    if (!t) {
        fails += report(false, "target " + target, t.error().message);
    } else {
        struct stat st;
        bool owned = ::stat(t->c_str(), &st) == 0 && st.st_uid == ::geteuid();
        fails += report(
            owned, "target " + t.value() + " exists and is yours",
            "files not owned by you cannot be changed inside (copy-up fails with EOVERFLOW); pick a target you own");
        std::string mi;
        if (auto f = base::open_at(AT_FDCWD, "/proc/self/mountinfo", O_RDONLY))
            mi = base::read_all(f->get(), 64 << 20).value();
        auto subs = overlay::submounts_under(overlay::parse_mountinfo(mi), t.value());
        for (const auto& m : subs) std::printf("      mounted below the target: %s\n", base::display_path(m).c_str());
        fails +=
            report(subs.empty(), "no other filesystems mounted below the target",
                   "the kernel refuses an unprivileged overlay over host mounts; pick a --target with none below it");
        int count = 0;
        int fd = ::open(t->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd >= 0) list_foreign(t.value(), fd, "", st.st_dev, &count);
        if (count > 20) std::printf("      ... and %d more\n", count - 20);
        fails += report(count == 0, "every entry under the target is yours",
                        std::to_string(count) +
                            " entries listed above cannot be modified inside the sandbox (EOVERFLOW on copy-up)");
    }
    return fails == 0 ? 0 : 1;
}
