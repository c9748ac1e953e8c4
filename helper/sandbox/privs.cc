#include "helper/sandbox/privs.h"

#include <fcntl.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "helper/base/fd.h"

namespace privs {

namespace {

// Read with open/read: an ifstream cost more than the read on the child's
// path to exec (issue 20).
int last_cap() {
    int n = 40;
    auto f = base::open_at(AT_FDCWD, "/proc/sys/kernel/cap_last_cap", O_RDONLY);
    if (!f) return n;
    auto text = base::read_all(f->get(), 64);
    if (text && !text->empty() && (*text)[0] >= '0' && (*text)[0] <= '9') n = std::atoi(text->c_str());
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
