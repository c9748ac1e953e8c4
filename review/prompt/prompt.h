// The exit-review prompt (`layover run --on-exit prompt`): summary, then
// review / apply / save / pick / keep / discard. Prints; returns the on-exit
// exit code: 0 done, 125 when the chosen action failed (the session is kept).
#pragma once
#include <string>

#include "helper/store/session/session.h"

namespace review {

int run_exit_prompt(const std::string& state, const session::Info& s);

// The session-kept message (Ctrl+C, EOF, [k], failures): how to resume.
void print_kept(const std::string& name);

}  // namespace review
