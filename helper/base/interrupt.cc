#include "helper/base/interrupt.h"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <mutex>
#include <string>

#include "helper/base/stop_signals.h"

namespace base {

namespace {

std::atomic<int> g_held{0};  // the first signal held, 0: none
std::mutex g_mu;
int g_depth = 0;  // InterruptDeferrals alive
int g_takers = 0;
int g_taken = 0;  // a held signal the outermost taker raises
StopSignalHandlers g_handlers;

void hold(int sig) {
    int none = 0;
    g_held.compare_exchange_strong(none, sig);
}

void install() { g_handlers.install(hold, SA_RESTART, false); }

void uninstall() { g_handlers.uninstall(); }

}  // namespace

InterruptDeferral::InterruptDeferral() {
    std::lock_guard<std::mutex> l(g_mu);
    if (g_depth++ == 0) install();
}

InterruptDeferral::~InterruptDeferral() {
    int sig = 0;
    {
        std::lock_guard<std::mutex> l(g_mu);
        if (--g_depth > 0) return;
        uninstall();
        sig = g_held.exchange(0);
        if (sig && g_takers > 0) {
            if (!g_taken) g_taken = sig;
            sig = 0;
        }
    }
    if (sig) ::raise(sig);  // no taker: now, with the action it had before
}

DeferredInterruptTaker::DeferredInterruptTaker() {
    std::lock_guard<std::mutex> l(g_mu);
    g_takers++;
}

DeferredInterruptTaker::~DeferredInterruptTaker() {
    int sig = 0;
    {
        std::lock_guard<std::mutex> l(g_mu);
        if (--g_takers == 0) std::swap(sig, g_taken);
    }
    if (!sig) return;
    std::fflush(nullptr);  // what the verb printed, before its default action ends the process
    ::raise(sig);
}

int interrupt_pending() { return g_held.load(); }

Result<void> stop_if_interrupted() {
    int sig = g_held.load();
    if (!sig) return Ok();
    return error(std::string("stopped by ") + (sig == SIGINT    ? "SIGINT (Ctrl+C)"
                                               : sig == SIGTERM ? "SIGTERM"
                                                                : "SIGHUP"));
}

}  // namespace base
