#include "helper/sandbox/setup/landlock.h"

#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>

#include "helper/base/fd.h"

namespace landlock {

namespace {

// Debian 12's headers predate ABI 6: the attribute with its `scoped` field.
struct RulesetAttr {
    uint64_t handled_access_fs;
    uint64_t handled_access_net;
    uint64_t scoped;
};
constexpr uint64_t kScopeAbstractUnixSocket = 1;
constexpr uint32_t kCreateRulesetVersion = 1;
#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_restrict_self 446
#endif

}  // namespace

int abi_version() {
    long v = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, kCreateRulesetVersion);
    return v < 0 ? 0 : static_cast<int>(v);
}

base::Result<bool> scope_abstract_unix_sockets() {
    if (abi_version() < 6) return false;
    RulesetAttr attr = {0, 0, kScopeAbstractUnixSocket};
    base::Fd ruleset(static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0)));
    if (!ruleset.valid()) return base::sys_error("creating the Landlock ruleset");
    if (::syscall(SYS_landlock_restrict_self, ruleset.get(), 0) != 0)
        return base::sys_error("entering the Landlock domain");
    return true;
}

}  // namespace landlock
