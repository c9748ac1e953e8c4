// Compile the seccomp table (seccomp_rules.h) to BPF with libseccomp and
// load it. Needs no_new_privs. A foreign architecture or an x32 syscall
// kills the process.
#pragma once
#include <vector>

#include "helper/base/result.h"
#include "helper/sandbox/seccomp_rules.h"

namespace seccomp {

// listener: when given, rename/renameat/renameat2 also notify, and the
// listening fd (close-on-exec) is returned there (rename_notify.h).
base::Result<void> install(const std::vector<SeccompRule>& rules, int* listener = nullptr);

// The running kernel can load filters and knows the actions we use.
bool kernel_supports();
// ... and user notification with SECCOMP_USER_NOTIF_FLAG_CONTINUE (5.5+).
bool notify_supported();

}  // namespace seccomp
