#include "helper/store/records/userns.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

#include "helper/base/fd.h"

namespace userns {

std::string one_line_map(unsigned inside, unsigned outside) {
    return std::to_string(inside) + " " + std::to_string(outside) + " 1\n";
}

namespace {

base::Result<void> write_proc(const char* file, const std::string& text) {
    auto fd = base::open_at(AT_FDCWD, std::string("/proc/self/") + file, O_WRONLY);
    if (!fd) return fd.error();
    if (::write(fd->get(), text.data(), text.size()) != static_cast<ssize_t>(text.size()))
        return base::sys_error(std::string("writing /proc/self/") + file);
    return base::Ok();
}

std::string read_sysctl(const char* path) {
    std::ifstream f(path);
    std::string v;
    if (f) std::getline(f, v);
    return v;
}

}  // namespace

base::Result<void> write_self_maps(unsigned inside_uid, unsigned outside_uid, unsigned inside_gid,
                                   unsigned outside_gid) {
    TRY_VOID(write_proc("setgroups", "deny"));
    TRY_VOID(write_proc("uid_map", one_line_map(inside_uid, outside_uid)));
    TRY_VOID(write_proc("gid_map", one_line_map(inside_gid, outside_gid)));
    return base::Ok();
}

base::Result<void> enter_owner_ns() {
    unsigned uid = ::geteuid(), gid = ::getegid();
    if (::unshare(CLONE_NEWUSER) != 0) return base::error(explain_userns_failure(errno));
    return write_self_maps(0, uid, 0, gid);
}

std::string explain_userns_failure(int err) {
    std::string why = "cannot create a user namespace";
    if (read_sysctl("/proc/sys/kernel/unprivileged_userns_clone") == "0")
        return why +
               ": unprivileged user namespaces are disabled; fix: sudo sysctl -w kernel.unprivileged_userns_clone=1";
    if (read_sysctl("/proc/sys/user/max_user_namespaces") == "0")
        return why + ": user.max_user_namespaces is 0; fix: sudo sysctl -w user.max_user_namespaces=15000";
    if (read_sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1")
        return why +
               ": AppArmor restricts unprivileged user namespaces; fix: sudo sysctl -w "
               "kernel.apparmor_restrict_unprivileged_userns=0 (or add an AppArmor profile for layover)";
    if (err == EINVAL) return why + ": the process is multi-threaded or in a chroot (EINVAL); run layover directly";
    if (err == ENOSPC) return why + ": the per-user namespace limit is reached; fix: raise user.max_user_namespaces";
    return base::sys_error(why, err).message + "; run 'layover doctor' for the fix";
}

}  // namespace userns
