// Everything `run` decides from its options on the host, before the session
// is touched: what is hidden, the environment, host paths shown or made
// writable, where the command starts, and the informational lines. A bad
// option fails here, so a refused run leaves no session behind.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "helper/sandbox/policy/hide.h"
#include "helper/sandbox/policy/run_args.h"

struct RunPolicy {
    HidePlan hide;
    std::vector<std::string> env;      // the command's environment
    std::vector<std::string> ro;       // resolved --ro paths
    std::vector<std::string> rw;       // resolved --rw paths
    std::string start;                 // the command's working directory
    std::vector<std::string> scratch;  // roots given a scratch layer (scratch.h)
    // --home ro: the same roots, read-only; each gets a read-only overlay
    // when a hidden path below it is missing (overlay/mask.h).
    std::vector<std::string> read_only;
    unsigned long long tmp_size = 0;
    std::vector<std::string> notices;  // informational stderr lines (not under --quiet)
    // Mounts below the target, from the mountinfo read for the hide plan;
    // unset if it could not be read (overlay::MountPlan::submounts).
    std::optional<std::vector<std::string>> submounts;
};

// command: the resolved argv (the default shell filled in).
base::Result<RunPolicy> decide_policy(const RunOptions& opts, const std::string& target, const std::string& state,
                                      const std::vector<std::string>& command);
