#include "helper/base/stop_signals.h"

namespace base {

void StopSignalHandlers::install(void (*handler)(int), int flags, bool block_all) {
    handler_ = handler;
    for (int i = 0; i < 3; i++) {
        struct sigaction old {};
        installed_[i] = false;
        if (::sigaction(kStopSignals[i], nullptr, &old) != 0 || (old.sa_flags & SA_SIGINFO) ||
            old.sa_handler != SIG_DFL)
            continue;
        struct sigaction sa {};
        sa.sa_handler = handler;
        sa.sa_flags = flags;
        ::sigemptyset(&sa.sa_mask);
        if (block_all)
            for (int s : kStopSignals) ::sigaddset(&sa.sa_mask, s);
        if (::sigaction(kStopSignals[i], &sa, &old_[i]) == 0) installed_[i] = true;
    }
}

void StopSignalHandlers::uninstall() {
    for (int i = 0; i < 3; i++) {
        if (!installed_[i]) continue;
        struct sigaction now {};
        if (::sigaction(kStopSignals[i], nullptr, &now) == 0 && !(now.sa_flags & SA_SIGINFO) &&
            now.sa_handler == handler_)
            ::sigaction(kStopSignals[i], &old_[i], nullptr);
        installed_[i] = false;
    }
}

}  // namespace base
