#include "helper/sandbox/seccomp/seccomp.h"

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

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

// The deny table (and the notified calls) on a default-allow filter.
base::Result<Ctx> build(const std::vector<SeccompRule>& rules, const std::vector<const char*>& notify) {
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
    for (const char* name : notify) {
        int nr = seccomp_syscall_resolve_name(name);
        if (nr == __NR_SCMP_ERROR) continue;
        TRY_VOID(check(seccomp_rule_add(ctx.get(), SCMP_ACT_NOTIFY, nr, 0), std::string("notifying ") + name));
    }
    // x32 syscalls carry x86_64's audit arch with bit 30 set in the number:
    // libseccomp sends any such number on an x86_64-only filter to the
    // bad-arch action (tests/unit/test_seccomp.cc proves it kills).
    return ctx;
}

// libseccomp 2.5 cannot ask for WAIT_KILLABLE_RECV: the program is exported
// and loaded here. Once the supervisor has a call, the task waits for the
// answer killably only: a signal would otherwise restart the call while the
// first is still being carried out (a rename done twice, the second ENOENT).
base::Result<Program> export_program(const Ctx& ctx) {
    base::Fd mem(::memfd_create("layover-seccomp", MFD_CLOEXEC));
    if (!mem.valid()) return base::sys_error("seccomp: memfd");
    TRY_VOID(check(seccomp_export_bpf(ctx.get(), mem.get()), "exporting the filter"));
    off_t size = ::lseek(mem.get(), 0, SEEK_CUR);
    Program insns(static_cast<size_t>(size) / sizeof(struct sock_filter));
    if (size <= 0 || ::pread(mem.get(), insns.data(), static_cast<size_t>(size), 0) != size)
        return base::sys_error("seccomp: reading the exported filter");
    return insns;
}

}  // namespace

base::Result<Program> compile_notifying(const std::vector<SeccompRule>& rules, const std::vector<const char*>& notify) {
    TRY(Ctx ctx, build(rules, notify));
    return export_program(ctx);
}

base::Result<base::Fd> load_notifying(const Program& program) {
    Program insns = program;
    struct sock_fprog prog = {static_cast<unsigned short>(insns.size()), insns.data()};
    unsigned long flags = SECCOMP_FILTER_FLAG_NEW_LISTENER | SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV;
    long fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
    if (fd < 0 && errno == EINVAL)  // before Linux 5.19 (docs/design.md: then a signal can interrupt a rename)
        fd = ::syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0) return base::sys_error("seccomp: loading the filter");
    return base::Fd(static_cast<int>(fd));
}

base::Result<void> install(const std::vector<SeccompRule>& rules) {
    TRY(Ctx ctx, build(rules, {}));
    return check(seccomp_load(ctx.get()), "loading the filter");
}

base::Result<base::Fd> install_notifying(const std::vector<SeccompRule>& rules,
                                         const std::vector<const char*>& notify) {
    TRY(Program program, compile_notifying(rules, notify));
    return load_notifying(program);
}

base::Result<void> export_bpf(const std::vector<SeccompRule>& rules, int fd) {
    TRY(Ctx ctx, build(rules, {}));
    return check(seccomp_export_bpf(ctx.get(), fd), "exporting the filter");
}

bool notify_supported() {
    // API level 6: the kernel has user notification and its CONTINUE flag (Linux 5.5).
    return seccomp_api_get() >= 6;
}

bool kernel_supports() {
    unsigned action = SECCOMP_RET_KILL_PROCESS;
    return ::syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0;
}

}  // namespace seccomp
