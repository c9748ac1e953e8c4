// The supervisor: it stays outside every new namespace, runs the sandbox
// (setup -> init -> child), relays the terminal and signals, and reports how
// the command ended. The session is already prepared and locked.
#pragma once
#include <optional>
#include <string>

#include "helper/sandbox/prepare/prepare.h"
#include "helper/sandbox/supervisor/pty_relay.h"

struct Outcome {
    int exit_code = 125;
    std::string setup_error;  // non-empty: layover failed to set up
    std::string stopped;      // non-empty: a limit stopped the sandbox (why, for stderr)
    int stop_code = 0;        // run's exit code then: 124 (--timeout) or 125 (--max-size)
    int cancelled = 0;        // signal N before a new session's dir was made: nothing made, run exits 128+N
};

Outcome supervise(PreparedRun& run, std::optional<PtyRelay>& pty);
