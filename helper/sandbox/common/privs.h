// Giving up privilege for good: no_new_privs, an empty capability bounding
// set, no ambient, permitted, effective or inheritable capabilities. Used by
// the command's process (helper/sandbox/setup/child.cc) and by the rename worker, which acts for
// the command with no more rights than it has.
#pragma once
#include "helper/base/result.h"

namespace privs {

base::Result<void> drop_all();

}  // namespace privs
