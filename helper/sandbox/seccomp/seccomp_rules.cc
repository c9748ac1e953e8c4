#include "helper/sandbox/seccomp/seccomp_rules.h"

#include <linux/falloc.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstdint>

namespace {

// The kernel's struct space_resv (include/linux/falloc.h, not in the uapi
// headers), whose size the three reservation ioctls encode.
struct SpaceResv {
    int16_t l_type, l_whence;
    int64_t l_start, l_len;
    int32_t l_sysid;
    uint32_t l_pid;
    int32_t l_pad[4];
};
static_assert(sizeof(SpaceResv) == 48);
constexpr unsigned long kResvsp = _IOW('X', 40, SpaceResv), kResvsp64 = _IOW('X', 42, SpaceResv),
                        kZeroRange = _IOW('X', 57, SpaceResv);

}  // namespace

const std::vector<SeccompRule>& default_seccomp_rules() {
    // ioctl requests are 32-bit: the kernel ignores the high half, so the
    // filter must too (else TIOCSTI | 1<<32 slips by; CVE-2019-10063).
    constexpr uint64_t k32 = 0xffffffffu;
    static const std::vector<SeccompRule> rules = {
        {"ioctl", EPERM, 1, k32, TIOCSTI, "typing into the terminal (CVE-2017-5226)"},
        {"ioctl", EPERM, 1, k32, TIOCLINUX, "console selection pastes into the terminal"},
        // vsock is not per network namespace: in a VM it reaches the
        // hypervisor's services (CID 2) past --network loopback and none
        // (attack17). Refused as a kernel without the family refuses it.
        {"socket", EAFNOSUPPORT, 0, k32, AF_VSOCK, "vsock reaches the hypervisor past the network namespace"},
        // A fallocate that reserves space (any mode but a hole punched or a
        // range collapsed) takes any size in one call, between two looks of
        // the free-space floor and --max-size's walk: `fallocate -l <free>`
        // left the disk at zero, the file kept in the session (attack32).
        // Refused as a filesystem without it refuses it: glibc's
        // posix_fallocate then writes, one interval's writing at a time.
        {"fallocate", EOPNOTSUPP, 1, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_COLLAPSE_RANGE, 0,
         "reserves any size at once, past the free-space floor"},
        // The same reservation by ioctl: fs/ioctl.c's generic
        // FS_IOC_RESVSP, FS_IOC_RESVSP64 and FS_IOC_ZERO_RANGE call
        // vfs_fallocate on any regular file (attack34: 1 GiB at once, 64
        // MiB above the floor). FS_IOC_UNRESVSP*, a punched hole, stay.
        {"ioctl", EOPNOTSUPP, 1, k32, kResvsp, "reserves any size at once, past the free-space floor"},
        {"ioctl", EOPNOTSUPP, 1, k32, kResvsp64, "reserves any size at once, past the free-space floor"},
        {"ioctl", EOPNOTSUPP, 1, k32, kZeroRange, "reserves any size at once, past the free-space floor"},
        {"ptrace", EPERM, -1, 0, 0, "reading or steering other processes"},
        {"process_vm_readv", EPERM, -1, 0, 0, "reading other processes' memory"},
        {"process_vm_writev", EPERM, -1, 0, 0, "writing other processes' memory"},
        {"kcmp", EPERM, -1, 0, 0, "probing other processes' kernel objects"},
        {"keyctl", EPERM, -1, 0, 0, "kernel keyrings are not namespaced"},
        {"add_key", EPERM, -1, 0, 0, "kernel keyrings are not namespaced"},
        {"request_key", EPERM, -1, 0, 0, "kernel keyrings are not namespaced"},
        {"bpf", EPERM, -1, 0, 0, "kernel attack surface"},
        {"perf_event_open", EPERM, -1, 0, 0, "kernel attack surface, side channels"},
        {"userfaultfd", EPERM, -1, 0, 0, "widens kernel race windows"},
        {"io_uring_setup", EPERM, -1, 0, 0, "bypasses this filter, kernel attack surface"},
        {"io_uring_enter", EPERM, -1, 0, 0, "bypasses this filter, kernel attack surface"},
        {"io_uring_register", EPERM, -1, 0, 0, "bypasses this filter, kernel attack surface"},
        {"fsopen", EPERM, -1, 0, 0, "the new mount API"},
        {"fsconfig", EPERM, -1, 0, 0, "the new mount API"},
        {"fsmount", EPERM, -1, 0, 0, "the new mount API"},
        {"fspick", EPERM, -1, 0, 0, "the new mount API"},
        {"move_mount", EPERM, -1, 0, 0, "the new mount API"},
        {"open_tree", EPERM, -1, 0, 0, "the new mount API"},
        {"mount_setattr", EPERM, -1, 0, 0, "the new mount API"},
        {"open_by_handle_at", EPERM, -1, 0, 0, "opens files by handle, past mounts"},
        {"name_to_handle_at", EPERM, -1, 0, 0, "file handles"},
        {"unshare", EPERM, 0, CLONE_NEWUSER, CLONE_NEWUSER, "a new user namespace"},
        {"clone", EPERM, 0, CLONE_NEWUSER, CLONE_NEWUSER, "a new user namespace"},
        // clone3 passes its flags in memory a filter cannot read: ENOSYS makes
        // libc fall back to clone, which the rule above checks.
        {"clone3", ENOSYS, -1, 0, 0, "flags out of the filter's reach"},
        {"kexec_load", EPERM, -1, 0, 0, "host administration"},
        {"kexec_file_load", EPERM, -1, 0, 0, "host administration"},
        {"init_module", EPERM, -1, 0, 0, "host administration"},
        {"finit_module", EPERM, -1, 0, 0, "host administration"},
        {"delete_module", EPERM, -1, 0, 0, "host administration"},
        {"reboot", EPERM, -1, 0, 0, "host administration"},
        {"swapon", EPERM, -1, 0, 0, "host administration"},
        {"swapoff", EPERM, -1, 0, 0, "host administration"},
        {"acct", EPERM, -1, 0, 0, "host administration"},
        {"quotactl", EPERM, -1, 0, 0, "host administration"},
    };
    return rules;
}
