// SIGINT, SIGTERM and SIGHUP, taken over only where the process leaves them
// at their default action: run's supervisor and the review prompt keep
// their own handlers (base::InterruptDeferral, base::UnlinkOnSignal).
#pragma once
#include <signal.h>

namespace base {

inline constexpr int kStopSignals[3] = {SIGINT, SIGTERM, SIGHUP};

class StopSignalHandlers {
public:
    // `handler` on each of the three still at SIG_DFL, with `flags`;
    // block_all: the three are blocked while it runs.
    void install(void (*handler)(int), int flags, bool block_all);
    // Each put back as it was, unless someone replaced ours since.
    void uninstall();

private:
    void (*handler_)(int) = nullptr;
    bool installed_[3] = {};
    struct sigaction old_[3] = {};
};

}  // namespace base
