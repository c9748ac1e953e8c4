#include "helper/sandbox/prepare/run_signals.h"

#include <sys/signalfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace run_signals {

namespace {

const int kRelayed[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2};

bool ignored(int sig) {
    struct sigaction sa;
    return ::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler == SIG_IGN;
}

}  // namespace

bool relayed(int sig) { return std::find(std::begin(kRelayed), std::end(kRelayed), sig) != std::end(kRelayed); }

bool cancels(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT; }

Action action_for(int sig, Phase phase) {
    if (sig == SIGWINCH) return Action::Resize;
    if (!relayed(sig)) return Action::None;
    if (phase == Phase::Running) return Action::Forward;
    if (phase == Phase::Starting && cancels(sig)) return Action::Cancel;
    return Action::Queue;
}

const char* name(int sig) {
    switch (sig) {
        case SIGINT: return "SIGINT";
        case SIGTERM: return "SIGTERM";
        case SIGHUP: return "SIGHUP";
        case SIGQUIT: return "SIGQUIT";
        case SIGUSR1: return "SIGUSR1";
        case SIGUSR2: return "SIGUSR2";
        default: return "a signal";
    }
}

void Pending::add(int sig) {
    if (std::find(sigs_.begin(), sigs_.end(), sig) == sigs_.end()) sigs_.push_back(sig);
}

std::vector<int> Pending::take() {
    std::vector<int> out;
    out.swap(sigs_);
    return out;
}

base::Result<Gate> Gate::block() {
    // A supervisor reaps its children (and setup and init, which inherit
    // this): an inherited SIG_IGN would have the kernel reap them first, and
    // run wait for them forever.
    ::signal(SIGCHLD, SIG_DFL);
    sigset_t set;
    ::sigemptyset(&set);
    // One ignored at entry (nohup) stays ignored: it neither cancels the run
    // nor goes to the command, which inherits the same SIG_IGN.
    for (int s : kRelayed)
        if (!ignored(s)) ::sigaddset(&set, s);
    ::sigaddset(&set, SIGCHLD);
    ::sigaddset(&set, SIGWINCH);
    Gate g;
    if (::sigprocmask(SIG_BLOCK, &set, &g.original_) != 0) return base::sys_error("blocking signals");
    g.fd_.reset(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (!g.fd_.valid()) {
        int err = errno;
        ::sigprocmask(SIG_SETMASK, &g.original_, nullptr);
        return base::sys_error("creating a signalfd for run's signals", err);
    }
    return g;
}

int Gate::next() {
    struct signalfd_siginfo si;
    if (!fd_.valid() || ::read(fd_.get(), &si, sizeof si) != sizeof si) return 0;
    return static_cast<int>(si.ssi_signo);
}

void Gate::drain() {
    while (next() != 0) {
    }
}

}  // namespace run_signals
