// The seccomp table, and the real filter loaded in forked children.
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/sched.h>
#include <sched.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "helper/sandbox/seccomp/seccomp.h"

namespace {

const SeccompRule* rule_for(const char* name) {
    for (const auto& r : default_seccomp_rules())
        if (std::strcmp(r.syscall, name) == 0) return &r;
    return nullptr;
}

// Run `body` in a child under the default filter; returns its wait status.
int filtered(const std::function<int()>& body) {
    pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (!seccomp::install(default_seccomp_rules())) ::_exit(100);
        ::_exit(body());
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return st;
}

// 0 when the call failed with `want`, else 1 (succeeded) or 2 (other errno).
int expect_errno(long rc, int want) { return rc == -1 && errno == want ? 0 : rc == -1 ? 2 : 1; }

}  // namespace

TEST_CASE("seccomp: the table holds every syscall the profile denies") {
    for (const char* name : {"ptrace",
                             "process_vm_readv",
                             "process_vm_writev",
                             "kcmp",
                             "keyctl",
                             "add_key",
                             "request_key",
                             "bpf",
                             "perf_event_open",
                             "userfaultfd",
                             "io_uring_setup",
                             "io_uring_enter",
                             "io_uring_register",
                             "fsopen",
                             "fsconfig",
                             "fsmount",
                             "fspick",
                             "move_mount",
                             "open_tree",
                             "mount_setattr",
                             "open_by_handle_at",
                             "name_to_handle_at",
                             "unshare",
                             "clone",
                             "clone3",
                             "kexec_load",
                             "kexec_file_load",
                             "init_module",
                             "finit_module",
                             "delete_module",
                             "reboot",
                             "swapon",
                             "swapoff",
                             "acct",
                             "quotactl",
                             "socket"}) {
        INFO(name);
        CHECK(rule_for(name) != nullptr);
    }
    CHECK(rule_for("clone3")->err == ENOSYS);
    CHECK(rule_for("unshare")->arg == 0);
    CHECK(rule_for("unshare")->mask == CLONE_NEWUSER);
    CHECK(rule_for("clone")->arg == 0);
    CHECK(rule_for("clone")->mask == CLONE_NEWUSER);
    CHECK(rule_for("clone")->value == CLONE_NEWUSER);
    // AF_VSOCK: the family in the low 32 bits (an int), refused as unknown.
    CHECK(rule_for("socket")->arg == 0);
    CHECK(rule_for("socket")->mask == 0xffffffffu);
    CHECK(rule_for("socket")->value == AF_VSOCK);
    CHECK(rule_for("socket")->err == EAFNOSUPPORT);
    int tiocsti = 0, tioclinux = 0;
    for (const auto& r : default_seccomp_rules()) {
        INFO(r.syscall);
        CHECK((r.err == EPERM || r.err == ENOSYS || r.err == EAFNOSUPPORT || r.err == EOPNOTSUPP));
        CHECK(r.arg < 6);
        CHECK((r.value & ~r.mask) == 0);  // else the rule could never match
        if (std::strcmp(r.syscall, "ioctl") == 0) {
            CHECK(r.arg == 1);
            CHECK(r.mask == 0xffffffffu);  // the low 32 bits only, as the kernel reads it
            tiocsti += r.value == TIOCSTI;
            tioclinux += r.value == TIOCLINUX;
        }
    }
    CHECK(tiocsti == 1);
    CHECK(tioclinux == 1);
}

#if defined(__x86_64__)
TEST_CASE("seccomp: every rule names a syscall libseccomp resolves on x86_64") {
    // install() skips a name it cannot resolve; here none may be skipped.
    for (const auto& r : default_seccomp_rules()) {
        INFO(r.syscall);
        CHECK(seccomp_syscall_resolve_name(r.syscall) != __NR_SCMP_ERROR);
    }
}
#endif

namespace {

// Each rule's errno plus 1000: an answer only the filter gives, where the
// kernel would refuse the caller anyway (no privilege) with the same EPERM.
constexpr int kMarker = 1000;

std::vector<SeccompRule> marked_rules() {
    auto rules = default_seccomp_rules();
    for (auto& r : rules) r.err += kMarker;
    return rules;
}

// The rule's syscall with its condition met (bits outside the mask set too:
// the filter must ignore them) or, with `match` false, not met. Arguments
// the rule does not test are -1 (an invalid fd, pointer and flags, so a call
// the filter let through fails harmlessly), or 0 for a call the filter must
// let through (an unmatched clone is then a plain fork).
int call_rule(const SeccompRule& r, bool match) {
    long fill = match ? -1 : 0;
    long args[6] = {fill, fill, fill, fill, fill, fill};
    if (r.arg >= 0) args[r.arg] = static_cast<long>(match ? r.value | (~r.mask & (0xffull << 40)) : r.value ^ r.mask);
    int nr = seccomp_syscall_resolve_name(r.syscall);
    long rc = ::syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
    if (rc == 0 && nr == SYS_clone) ::_exit(0);  // a child the unmatched clone made
    return rc == -1 ? errno : 0;
}

int filtered_marked(const SeccompRule& r, bool match) {
    pid_t pid = ::fork();
    if (pid == 0) {
        ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        if (!seccomp::install(marked_rules())) ::_exit(100);
        int e = call_rule(r, match);
        ::_exit(e == r.err + kMarker ? 0 : 1);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

}  // namespace

TEST_CASE("seccomp: the compiled filter answers every rule of the table, and only when its condition holds") {
    for (const auto& r : default_seccomp_rules()) {
        INFO(r.syscall << " arg " << r.arg << " value " << r.value);
        CHECK(filtered_marked(r, true) == 0);
        if (r.arg >= 0) CHECK(filtered_marked(r, false) == 1);
    }
}

TEST_CASE("seccomp: the loaded filter denies what the table says and allows the rest") {
    CHECK(filtered([] { return expect_errno(::syscall(SYS_ptrace, 0 /*PTRACE_TRACEME*/, 0, 0, 0), EPERM); }) == 0);
    CHECK(filtered([] { return expect_errno(::unshare(CLONE_NEWUSER), EPERM); }) == 0);
    CHECK(filtered([] { return expect_errno(::syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM); }) == 0);
    CHECK(filtered([] {
              struct clone_args args = {};
              args.exit_signal = SIGCHLD;
              return expect_errno(::syscall(SYS_clone3, &args, sizeof args), ENOSYS);
          }) == 0);
    CHECK(filtered([] {
              char c = 'x';
              // The high half set: the kernel would still see TIOCSTI.
              return expect_errno(::syscall(SYS_ioctl, 0, (1ul << 32) | TIOCSTI, &c), EPERM);
          }) == 0);
    CHECK(filtered([] { return expect_errno(::syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM); }) == 0);
    CHECK(filtered([] { return expect_errno(::syscall(SYS_io_uring_setup, 1, nullptr), EPERM); }) == 0);
    CHECK(filtered([] { return expect_errno(::syscall(SYS_fsopen, "tmpfs", 0), EPERM); }) == 0);
    CHECK(filtered([] { return expect_errno(::syscall(SYS_open_tree, AT_FDCWD, "/", 0), EPERM); }) == 0);
    CHECK(filtered([] { return expect_errno(::socket(AF_VSOCK, SOCK_STREAM, 0), EAFNOSUPPORT); }) == 0);
    // fallocate: refused where it reserves space, allowed where it frees (attack32).
    CHECK(filtered([] {
              FILE* f = ::tmpfile();
              if (!f) return 3;
              int fd = ::fileno(f);
              if (expect_errno(::fallocate(fd, 0, 0, 1 << 20), EOPNOTSUPP) != 0) return 1;
              if (expect_errno(::fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 1 << 20), EOPNOTSUPP) != 0) return 1;
              if (expect_errno(::fallocate(fd, FALLOC_FL_ZERO_RANGE, 0, 1 << 20), EOPNOTSUPP) != 0) return 1;
              if (::ftruncate(fd, 1 << 20) != 0) return 3;
              long rc = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096);
              return rc == 0 ? 0 : 2;
          }) == 0);
    // The same reservation by ioctl (FS_IOC_RESVSP, RESVSP64, ZERO_RANGE: 'X' 40, 42, 57 on a
    // 48-byte struct space_resv), the high half ignored as the kernel does (attack34).
    CHECK(filtered([] {
              FILE* f = ::tmpfile();
              if (!f) return 3;
              int fd = ::fileno(f);
              int64_t resv[6] = {0, 0, 1 << 20, 0, 0, 0};
              for (unsigned long nr : {40ul, 42ul, 57ul}) {
                  unsigned long req = (1ul << 30) | (48ul << 16) | ('X' << 8) | nr;
                  if (expect_errno(::syscall(SYS_ioctl, fd, req, resv), EOPNOTSUPP) != 0) return 1;
                  if (expect_errno(::syscall(SYS_ioctl, fd, (1ul << 32) | req, resv), EOPNOTSUPP) != 0) return 1;
              }
              return 0;
          }) == 0);
    // Still allowed: ordinary calls, and namespaces other than user ones.
    CHECK(filtered([] { return ::syscall(SYS_getpid) > 0 ? 0 : 1; }) == 0);
    CHECK(filtered([] { return ::unshare(0) == 0 ? 0 : 1; }) == 0);
    CHECK(filtered([] {
              int fds[2];
              return ::socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0 && ::socket(AF_INET, SOCK_DGRAM, 0) >= 0 ? 0 : 1;
          }) == 0);
    CHECK(filtered([] {
              pid_t p = ::fork();
              if (p == 0) ::_exit(7);
              int st;
              ::waitpid(p, &st, 0);
              return WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : 1;
          }) == 0);
}

#if defined(__x86_64__)
TEST_CASE("seccomp: an x32 syscall kills the process") {
    int st = filtered([] {
        ::syscall(0x40000000 | SYS_getpid);
        return 0;
    });
    CHECK(WIFSIGNALED(st));
    CHECK(WTERMSIG(st) == SIGSYS);
}

namespace {
int i386_getpid() {
    ::signal(SIGSEGV, SIG_DFL);  // no IA32 emulation: int 0x80 faults
    long ret;
    // i386's getpid (20) through the 32-bit entry: audit arch I386.
    asm volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory");
    return ret > 0 ? 0 : 1;
}
}  // namespace

TEST_CASE("seccomp: a syscall through a foreign architecture (i386 int 0x80) kills the process") {
    pid_t p = ::fork();
    if (p == 0) ::_exit(i386_getpid());
    int plain = 0;
    ::waitpid(p, &plain, 0);
    int st = filtered(i386_getpid);
    REQUIRE(WIFSIGNALED(st));
    if (WIFEXITED(plain) && WEXITSTATUS(plain) == 0) {
        CHECK(WTERMSIG(st) == SIGSYS);  // the kernel runs i386 calls; the filter kills them
    } else {
        // This kernel has no IA32 emulation: the call cannot even be made.
        WARN("no IA32 emulation here: the i386 entry faults with or without the filter");
        CHECK(WTERMSIG(plain) == SIGSEGV);
    }
}
#endif
