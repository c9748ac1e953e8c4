// Run a job as the owner of the session's files: in a fresh owner user
// namespace (userns::enter_owner_ns), every entry the caller owns is readable
// whatever its mode. Either in a forked child (the caller keeps its identity
// and may be threaded) or, cheaper, in the calling process itself.
#pragma once
#include <functional>
#include <string>

#include "helper/base/result.h"

namespace capture {

// fn runs in a forked child; its string result (or error) comes back over a pipe.
base::Result<std::string> in_owner_ns(const std::function<base::Result<std::string>()>& fn);
// The same, and `then` runs here as soon as fn's whole result has arrived
// and says it succeeded, while the child may still be exiting (unmapping
// its memory, closing its files): work that can overlap that, such as
// save's fsync. An error from `then`, or a child that then fails, is the result.
base::Result<std::string> in_owner_ns(const std::function<base::Result<std::string>()>& fn,
                                      const std::function<base::Result<void>()>& then);

// fn runs in this process, which enters the owner namespace for good: call it
// only while single-threaded, from a process that needs its own identity for
// nothing afterwards (`layover status`). Saves the fork and the copy of the
// result through a pipe. fn runs on a thread with a deep stack, like in_owner_ns.
base::Result<void> as_owner_here(const std::function<base::Result<void>()>& fn);

}  // namespace capture
