// doctor's probes of the real system, filled into doctor::Probes. Files are
// read under probe_root() (a test's fake root); namespace probes run in a
// forked child so they never touch this process.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <functional>

#include "helper/base/child.h"
#include "helper/base/text.h"
#include "helper/cli/doctor/doctor.h"
#include "helper/sandbox/prepare/prepare.h"
#include "helper/sandbox/seccomp/seccomp.h"
#include "helper/sandbox/setup/landlock.h"
#include "helper/store/records/userns.h"
#include "helper/store/session/remove.h"
#include "helper/store/session/session.h"
#include "overlay/mountinfo.h"

namespace doctor {

namespace {

constexpr long kNfsMagic = 0x6969;

std::string first_line(const std::string& path) {
    std::ifstream f(probe_root() + path);
    std::string v;
    if (f) std::getline(f, v);
    return v;
}

bool exists(const std::string& path) { return ::access((probe_root() + path).c_str(), F_OK) == 0; }

// Run probe in a forked child (namespaces must not touch us); true if it returns 0.
bool in_child(const std::function<int()>& probe) {
    auto c = base::spawn(probe);
    if (!c) return false;
    auto st = c->wait();
    return st && base::exit_code_of(st.value()) == 0;
}

// Entries of a tree not owned by the caller: copying them up fails with
// EOVERFLOW (their owner is not mapped in the sandbox's user namespace).
void list_foreign(int dirfd, const std::string& rel, dev_t dev, Probes& p) {
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
        std::string rp = rel.empty() ? n : rel + "/" + n;
        if (st.st_uid != ::geteuid() && ++p.foreign_count <= 20)
            p.foreign.push_back("uid " + std::to_string(st.st_uid) + "): " + p.target + "/" + base::display_path(rp));
        if (S_ISDIR(st.st_mode) && st.st_dev == dev) {
            int sub = ::openat(::dirfd(d), n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (sub >= 0) list_foreign(sub, rp, dev, p);
        }
    }
    ::closedir(d);
}

void probe_userns(Probes& p) {
    p.userns_clone = first_line("/proc/sys/kernel/unprivileged_userns_clone");
    p.max_user_ns = first_line("/proc/sys/user/max_user_namespaces");
    p.apparmor_restrict = first_line("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    p.osrelease = first_line("/proc/sys/kernel/osrelease");
    p.apparmor_label = first_line("/proc/self/attr/apparmor/current");
    if (p.apparmor_label.empty()) p.apparmor_label = first_line("/proc/self/attr/current");
    char self[4096];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    p.self_path = n > 0 ? std::string(self, n) : "/usr/local/bin/layover";
    p.profile_installed = exists("/etc/apparmor.d/" + profile_name(p.self_path));
    if (exists("/run/.containerenv")) p.container = "podman";
    else if (exists("/.dockerenv")) p.container = "docker";
    p.userns_ok = in_child([] { return userns::enter_owner_ns().ok() ? 0 : 1; });
}

void probe_state(Probes& p) {
    auto state = session::state_dir();
    p.state_ok = state.ok();
    if (!state) {
        p.state_error = state.error().message;
        return;
    }
    p.state_dir = state.value();
    struct statfs fs;
    p.state_nfs = ::statfs(p.state_dir.c_str(), &fs) == 0 && fs.f_type == kNfsMagic;
    std::string probe = p.state_dir + "/.doctor-" + std::to_string(::getpid());
    ::mkdir(probe.c_str(), 0700);
    std::string f = probe + "/x";
    int fd = ::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    if (fd >= 0) ::close(fd);
    p.xattr_ok = ::setxattr(f.c_str(), "user.layover.probe", "1", 1, 0) == 0;
    for (const char* d : {"/lower", "/upper", "/work", "/merged"}) ::mkdir((probe + d).c_str(), 0700);
    p.overlay_ok = p.userns_ok && in_child([&] {
                       if (!userns::enter_owner_ns() || ::unshare(CLONE_NEWNS) != 0) return 1;
                       std::string o = "lowerdir=" + probe + "/lower,upperdir=" + probe + "/upper,workdir=" + probe +
                                       "/work,userxattr";
                       return ::mount("overlay", (probe + "/merged").c_str(), "overlay", 0, o.c_str()) == 0 ? 0 : 1;
                   });
    (void)remove_tree_fast(probe);
}

void probe_filters(Probes& p) {
    p.proc_ok =
        p.userns_ok && in_child([] {
            if (!userns::enter_owner_ns() || ::unshare(CLONE_NEWNS | CLONE_NEWPID) != 0) return 1;
            if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 1;
            pid_t pid = ::fork();
            if (pid == 0)
                ::_exit(::mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0 ? 0 : 1);
            int st = 0;
            ::waitpid(pid, &st, 0);
            return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
        });
    p.sys_ok = p.userns_ok && in_child([] {
                   if (!userns::enter_owner_ns() || ::unshare(CLONE_NEWNS | CLONE_NEWNET) != 0) return 1;
                   if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 1;
                   unsigned long fl = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;
                   return ::mount("sysfs", "/sys", "sysfs", fl, nullptr) == 0 ? 0 : 1;
               });
    p.seccomp_ok = seccomp::kernel_supports() && in_child([] {
                       if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return 1;
                       return seccomp::install(default_seccomp_rules()).ok() ? 0 : 1;
                   });
    p.notify_ok = seccomp::notify_supported();
    p.landlock_abi = landlock::abi_version();
}

void probe_target(const std::string& target, Probes& p) {
    auto t = resolve_target(target.empty() ? "." : target);
    p.target = target;
    if (!t) {
        p.target_error = t.error().message;
        return;
    }
    p.target_ok = true;
    p.target = t.value();
    struct stat st;
    p.target_owned = ::stat(p.target.c_str(), &st) == 0 && st.st_uid == ::geteuid();
    std::string mi;
    if (auto f = base::open_at(AT_FDCWD, "/proc/self/mountinfo", O_RDONLY))
        mi = base::read_all(f->get(), 64 << 20).value();
    for (const auto& m : overlay::submounts_under(overlay::parse_mountinfo(mi), p.target))
        p.submounts.push_back(base::display_path(m));
    int fd = ::open(p.target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) list_foreign(fd, "", st.st_dev, p);
}

}  // namespace

std::string probe_root() {
    const char* r = std::getenv("LAYOVER_TEST_DOCTOR_ROOT");
    return r && *r ? std::string(r) : std::string();
}

Probes probe_system(const std::string& target) {
    Probes p;
    probe_userns(p);
    probe_state(p);
    probe_filters(p);
    probe_target(target, p);
    return p;
}

}  // namespace doctor
