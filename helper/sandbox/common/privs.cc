#include "helper/sandbox/common/privs.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace privs {

base::Result<void> drop_all() {
    // no_new_privs first: nothing exec'd later (setuid, file caps) can regain any.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return base::sys_error("setting no_new_privs");
    // Every capability the kernel knows, 0 up to the first it calls invalid
    // (cap_last_cap + 1): no read of /proc/sys/kernel/cap_last_cap on the
    // child's path to exec (issue 20).
    for (int c = 0; c < 64; c++) {
        if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) == 0) continue;
        if (errno == EINVAL && c > 0) break;
        return base::sys_error("dropping capability bounding set");
    }
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    std::memset(data, 0, sizeof data);
    if (::syscall(SYS_capset, &hdr, data) != 0) return base::sys_error("dropping capabilities");
    return base::Ok();
}

}  // namespace privs
