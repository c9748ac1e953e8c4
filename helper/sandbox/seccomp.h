// Compile the seccomp table (seccomp_rules.h) to BPF with libseccomp and
// load it. Needs no_new_privs. A foreign architecture or an x32 syscall
// kills the process.
#pragma once
#include <vector>

#include "helper/base/result.h"
#include "helper/sandbox/seccomp_rules.h"

namespace seccomp {

base::Result<void> install(const std::vector<SeccompRule>& rules);

// The running kernel can load filters and knows the actions we use.
bool kernel_supports();

}  // namespace seccomp
