// Run a job in a forked child that entered a fresh owner user namespace
// (userns::enter_owner_ns), so every entry the caller owns is readable
// whatever its mode. The caller keeps its identity and may be threaded.
#pragma once
#include <functional>
#include <string>

#include "helper/base/result.h"

namespace capture {

// fn runs in the child; its string result (or error) comes back over a pipe.
base::Result<std::string> in_owner_ns(const std::function<base::Result<std::string>()>& fn);

}  // namespace capture
