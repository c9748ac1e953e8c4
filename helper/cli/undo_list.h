// `layover undo --list` and `--last`: the undo records of one target.
#pragma once
#include <string>

#include "helper/base/result.h"

// The target --list/--last work on: DIR made absolute and real, or $HOME.
base::Result<std::string> undo_target(const std::string& dir);
// Print the records (newest first), as a table or --json. Returns the exit code.
int undo_list(const std::string& target, bool json);
// The newest record of the target (what `undo --last` undoes).
base::Result<std::string> newest_record(const std::string& target);
