// The full risk context of a patch (or a session read as one): the path
// rules' context for its target plus what its contents say (secrets, npm
// scripts, editor tasks), the old side read from the real target.
#pragma once
#include <string>

#include "capture/patch/reader.h"
#include "review/prompt/risk.h"

namespace review {

// target: where it would be applied ("" = the patch's own target).
RiskContext risk_context_of_patch(const capture::Patch& patch, const std::string& target = "");

}  // namespace review
