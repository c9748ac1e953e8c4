// `run`'s signals from its first instruction to its exit (docs/design.md,
// "Signals"): blocked at once and read from a signalfd, so that none kills
// run half-way through making a session, and none is lost while the command
// starts. The decisions are pure (action_for, Pending), the syscalls in Gate.
#pragma once
#include <signal.h>

#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace run_signals {

// How far the run has got when a signal is read.
enum class Phase {
    Starting,  // a new session's dir is not made yet: nothing to keep
    Made,      // the session dir exists, init's pid is not known yet
    Running,   // init's pid is known: signals go to it
};

enum class Action {
    Cancel,   // stop before making anything: run exits 128+N
    Queue,    // keep it for init, once its pid is known
    Forward,  // to init, which forwards it to the command
    Resize,   // SIGWINCH: the pty follows the terminal
    None,     // SIGCHLD: the supervisor's loop reaps setup
};

// The signals relayed to the command; each ends it by default.
bool relayed(int sig);
// A terminating signal that cancels a run not yet started (SIGUSR1/2 wait for the command).
bool cancels(int sig);
Action action_for(int sig, Phase phase);
// "SIGINT" for a relayed signal, "a signal" otherwise (for run's messages).
const char* name(int sig);

// Signals read before init's pid: each once, in arrival order (the kernel
// keeps one of each pending too).
class Pending {
public:
    void add(int sig);
    std::vector<int> take();
    bool empty() const { return sigs_.empty(); }

private:
    std::vector<int> sigs_;
};

// The relayed signals (but those ignored at entry), SIGCHLD (its default
// action restored) and SIGWINCH, blocked process-wide and read from one
// signalfd until run exits. Children that exec get `original()` back (or set
// their own mask: setup, init and the command do).
class Gate {
public:
    Gate() = default;
    static base::Result<Gate> block();
    int fd() const { return fd_.get(); }
    const sigset_t& original() const { return original_; }
    // The next queued signal, or 0 when none is (never blocks).
    int next();
    // Drop what is queued (the command has ended: nothing to relay).
    void drain();

private:
    base::Fd fd_;
    sigset_t original_{};
};

}  // namespace run_signals
