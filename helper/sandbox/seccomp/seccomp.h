// Compile the seccomp table (seccomp_rules.h) to BPF with libseccomp and
// load it. Needs no_new_privs. A foreign architecture or an x32 syscall
// kills the process.
#pragma once
#include <linux/filter.h>

#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/sandbox/seccomp/seccomp_rules.h"

namespace seccomp {

base::Result<void> install(const std::vector<SeccompRule>& rules);
// As install(), and the calls named in notify wait for a user-space answer
// through the returned listener (helper/sandbox/rename/rename_notify.h).
base::Result<base::Fd> install_notifying(const std::vector<SeccompRule>& rules, const std::vector<const char*>& notify);
// install_notifying() in two halves: compile (libseccomp, ~0.2 ms; setup does
// it ahead, issue 20), then load (the kernel's checks and JIT).
using Program = std::vector<struct sock_filter>;
base::Result<Program> compile_notifying(const std::vector<SeccompRule>& rules, const std::vector<const char*>& notify);
base::Result<base::Fd> load_notifying(const Program& program);
// The kernel can hand calls to a listener and let them continue (Linux 5.5).
bool notify_supported();

// Write the filter install() would load, as raw BPF (struct sock_filter[]),
// to fd: for `make bench`, which hands it to bwrap --seccomp.
base::Result<void> export_bpf(const std::vector<SeccompRule>& rules, int fd);

// The running kernel can load filters and knows the actions we use.
bool kernel_supports();

}  // namespace seccomp
