#include "helper/sandbox/privs.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace privs {

namespace {

int last_cap() {
    std::ifstream f("/proc/sys/kernel/cap_last_cap");
    int n = 40;
    if (f) f >> n;
    return n;
}

}  // namespace

base::Result<void> drop_all() {
    // no_new_privs first: nothing exec'd later (setuid, file caps) can regain any.
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return base::sys_error("setting no_new_privs");
    int last = last_cap();
    for (int c = 0; c <= last; c++)
        if (::prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0 && errno != EINVAL)
            return base::sys_error("dropping capability bounding set");
    ::prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    std::memset(data, 0, sizeof data);
    if (::syscall(SYS_capset, &hdr, data) != 0) return base::sys_error("dropping capabilities");
    return base::Ok();
}

}  // namespace privs
