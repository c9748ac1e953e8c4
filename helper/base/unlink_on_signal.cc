#include "helper/base/unlink_on_signal.h"

#include <limits.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "helper/base/stop_signals.h"

namespace base {

namespace {

constexpr int kSlots = 8;

// What the handler reads: fixed storage, no allocation (async-signal-safe).
char g_paths[kSlots][PATH_MAX];
std::atomic<bool> g_used[kSlots];

std::mutex g_mu;  // slots taken and handlers installed
int g_armed = 0;
StopSignalHandlers g_handlers;

void on_signal(int sig) {
    int saved = errno;
    for (int i = 0; i < kSlots; i++)
        if (g_used[i].load(std::memory_order_acquire)) ::unlink(g_paths[i]);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigemptyset(&dfl.sa_mask);
    ::sigaction(sig, &dfl, nullptr);
    ::raise(sig);  // blocked while this runs: delivered, with its default action, on return
    errno = saved;
}

// Only signals nobody handles or ignores: run's supervisor and the review
// prompt keep theirs.
void install() { g_handlers.install(on_signal, 0, true); }

void uninstall() { g_handlers.uninstall(); }

}  // namespace

UnlinkOnSignal::UnlinkOnSignal(const std::string& path) {
    if (path.empty() || path.size() >= PATH_MAX) return;
    std::lock_guard<std::mutex> l(g_mu);
    for (int i = 0; i < kSlots; i++) {
        if (g_used[i].load(std::memory_order_relaxed)) continue;
        std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
        g_used[i].store(true, std::memory_order_release);
        slot_ = i;
        if (g_armed++ == 0) install();
        return;
    }
}

UnlinkOnSignal::~UnlinkOnSignal() {
    if (slot_ < 0) return;
    std::lock_guard<std::mutex> l(g_mu);
    g_used[slot_].store(false, std::memory_order_release);
    if (--g_armed == 0) uninstall();
}

}  // namespace base
