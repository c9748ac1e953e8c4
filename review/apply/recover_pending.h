// An apply or undo killed on a target (its journal left in the state dir),
// seen or recovered by the verbs that do not apply: `undo --last` and
// `undo --list` (docs/security.md, "Crash safety").
#pragma once
#include <string>

#include "helper/base/result.h"

namespace review {

// True when an apply or undo on `target` (a real path) left its journal:
// killed, or still running. One stat; no lock taken.
bool journal_pending(const std::string& state, const std::string& target);

struct Recovered {
    std::string note;        // recover()'s one line; "" when nothing was pending
    bool took_back = false;  // an apply reverted or an undo finished (not an apply found complete)
    int interrupted = 0;     // the SIGINT, SIGTERM or SIGHUP held while recovering, 0 when none
};

// Under the target's lock (refused while another apply or undo runs there),
// recover what a killed apply or undo on `target` left, as the next apply
// or undo does first. With `apply_only`, a killed undo is left as it is.
// A SIGINT, SIGTERM or SIGHUP during the recovery waits for its end, as in
// apply's commit (helper/base/interrupt.h): raised when it returns, or taken
// by the caller's DeferredInterruptTaker (`interrupted` names it).
base::Result<Recovered> recover_pending(const std::string& state, const std::string& target, bool apply_only = false);

}  // namespace review
