#include "helper/sandbox/seccomp.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace seccomp {

namespace {

struct CtxFree {
    void operator()(scmp_filter_ctx c) const { seccomp_release(c); }
};
using Ctx = std::unique_ptr<void, CtxFree>;

base::Result<void> check(int rc, const std::string& what) {
    if (rc < 0) return base::error("seccomp: " + what + ": " + std::strerror(-rc));
    return base::Ok();
}

}  // namespace

base::Result<void> install(const std::vector<SeccompRule>& rules, int* listener) {
    Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
    if (!ctx) return base::error("seccomp: cannot allocate a filter");
    // Only the native architecture: a syscall made through another ABI (i386
    // on x86_64, say) kills the process instead of slipping past the rules.
    TRY_VOID(check(seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), "bad-arch action"));
    for (const auto& r : rules) {
        int nr = seccomp_syscall_resolve_name(r.syscall);
        if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture
        int rc;
        if (r.arg < 0) {
            rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(r.err), nr, 0);
        } else {
            struct scmp_arg_cmp cmp = {static_cast<unsigned>(r.arg), SCMP_CMP_MASKED_EQ, r.mask, r.value};
            rc = seccomp_rule_add(ctx.get(), SCMP_ACT_ERRNO(r.err), nr, 1, cmp);
        }
        TRY_VOID(check(rc, std::string("rule for ") + r.syscall));
    }
    // x32 syscalls carry x86_64's audit arch with bit 30 set in the number:
    // libseccomp sends any such number on an x86_64-only filter to the
    // bad-arch action (tests/unit/test_seccomp.cc proves it kills).
    if (listener) {
        // Directory renames the kernel refuses on our overlay (EXDEV) are
        // done by the supervisor's worker instead (docs/design.md).
        for (const char* name : {"rename", "renameat", "renameat2"}) {
            int nr = seccomp_syscall_resolve_name(name);
            if (nr == __NR_SCMP_ERROR) continue;
            TRY_VOID(
                check(seccomp_rule_add(ctx.get(), SCMP_ACT_NOTIFY, nr, 0), std::string("notify rule for ") + name));
        }
    }
    TRY_VOID(check(seccomp_load(ctx.get()), "loading the filter"));
    if (listener) {
        int fd = seccomp_notify_fd(ctx.get());
        if (fd < 0) return base::error("seccomp: no notification fd (Linux 5.5+ needed)");
        int dup = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (dup < 0) return base::sys_error("seccomp: keeping the notification fd");
        *listener = dup;
    }
    return base::Ok();
}

bool notify_supported() {
    unsigned action = SECCOMP_RET_USER_NOTIF;
    struct utsname u;
    int major = 0, minor = 0;
    // The CONTINUE flag (5.5) cannot be probed without a filter: check the release.
    if (::uname(&u) != 0 || std::sscanf(u.release, "%d.%d", &major, &minor) != 2) return false;
    if (major < 5 || (major == 5 && minor < 5)) return false;
    return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

bool kernel_supports() {
    unsigned action = SECCOMP_RET_KILL_PROCESS;
    return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

}  // namespace seccomp
