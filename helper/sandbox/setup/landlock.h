// Landlock scoping (Linux 6.12+, ABI 6): the command cannot connect to an
// abstract unix socket outside its own Landlock domain. That matters with
// --network host, where the abstract namespace is the host's (X11, D-Bus
// sockets of some desktops, container runtimes); in an own network
// namespace the kernel separates them already.
#pragma once
#include "helper/base/result.h"

namespace landlock {

// The running kernel's Landlock ABI version; 0 when Landlock is off or absent.
int abi_version();

// Restrict the calling process (and what it execs) to its own domain for
// abstract unix sockets. Needs no_new_privs. Returns false, changing
// nothing, when the kernel's ABI is below 6.
base::Result<bool> scope_abstract_unix_sockets();

}  // namespace landlock
