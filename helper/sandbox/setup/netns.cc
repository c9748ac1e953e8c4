#include "helper/sandbox/setup/netns.h"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
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

void Pending::make(bool loopback) {
    if (::unshare(CLONE_NEWNET) != 0) {
        error_ = base::sys_error("creating the network namespace").message;
        return;
    }
    if (loopback) {
        if (auto up = bring_up_loopback(); !up) {
            error_ = up.error().message;
            return;
        }
    }
    ns_ = base::Fd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
    if (!ns_.valid()) {
        error_ = base::sys_error("opening the new network namespace").message;
        return;
    }
    auto sys = overlay::make_own_sys();  // scoped to this thread's namespace
    if (!sys) error_ = sys.error().message;
    else sys_ = std::move(sys.value());
}

void Pending::start(bool loopback) {
    if (!thread_.start([this, loopback] { make(loopback); }, size_t{1} << 16)) make(loopback);
}

base::Result<overlay::OwnSys> Pending::own_sys() {
    thread_.join();
    if (!error_.empty()) return base::error(error_);
    return std::move(sys_);
}

base::Result<void> Pending::enter() {
    thread_.join();
    if (!error_.empty()) return base::error(error_);
    if (::setns(ns_.get(), CLONE_NEWNET) != 0) return base::sys_error("entering the network namespace");
    ns_.reset();
    return base::Ok();
}

}  // namespace netns
