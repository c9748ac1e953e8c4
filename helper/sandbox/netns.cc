#include "helper/sandbox/netns.h"

#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>

#include "helper/base/fd.h"

namespace netns {

base::Result<void> bring_up_loopback() {
    base::Fd s(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!s.valid()) return base::sys_error("socket for loopback set-up");
    struct ifreq ifr;
    std::memset(&ifr, 0, sizeof ifr);
    std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
    if (::ioctl(s.get(), SIOCGIFFLAGS, &ifr) != 0) return base::sys_error("reading loopback flags");
    ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
    if (::ioctl(s.get(), SIOCSIFFLAGS, &ifr) != 0) return base::sys_error("bringing up loopback");
    return base::Ok();
}

}  // namespace netns
