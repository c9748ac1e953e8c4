// The supervisor: it stays outside every new namespace, runs the sandbox
// (setup -> init -> child), relays the terminal and signals, and reports how
// the command ended. The session is already prepared and locked.
#pragma once
#include <optional>
#include <string>

#include "helper/sandbox/prepare.h"
#include "helper/sandbox/pty_relay.h"

struct Outcome {
    int exit_code = 125;
    std::string setup_error;  // non-empty: layover failed to set up
};

Outcome supervise(PreparedRun& run, std::optional<PtyRelay>& pty);
