// The default isolation profile as data: the paths --hide-secrets hides and
// the environment variables that stay outside. Pure (no syscalls) and
// unit-tested; the config file (a later issue) extends these lists.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "helper/base/passwd.h"

namespace profile {

// Paths relative to $HOME that --hide-secrets (on by default) hides.
const std::vector<std::string>& secret_paths();
// Absolute paths of daemon sockets --hide-secrets hides too.
const std::vector<std::string>& daemon_sockets();

// Glob patterns (fnmatch) of variables dropped by default: host secrets and
// the addresses of host daemons.
const std::vector<std::string>& secret_env_patterns();

// What --env-clear starts from (globs).
const std::vector<std::string>& minimal_env();

struct EnvPolicy {
    bool clear = false;             // --env-clear
    std::vector<std::string> keep;  // --env-keep GLOB
    std::vector<std::string> set;   // --env NAME=VALUE, validated
};

struct EnvOutcome {
    std::vector<std::string> env;      // NAME=VALUE, in the host's order, then the set ones
    std::vector<std::string> dropped;  // names dropped as secrets (not --env-clear's), sorted
};

// The child's environment from the caller's. layover's own variables
// (LAYOVER_*: the state dir above all) never pass; the child sets
// LAYOVER_SESSION, LAYOVER_TARGET and LAYOVER_IPC_FD itself.
EnvOutcome filter_env(const std::vector<std::string>& host, const EnvPolicy& policy);

// A usable variable name: [A-Za-z_][A-Za-z0-9_]*.
bool valid_env_name(std::string_view name);

// "a, b, c, …" with at most `max` names, for one stderr line.
std::string list_names(const std::vector<std::string>& names, size_t max);

// The home of `uid` in passwd(5) text (helper/base/passwd.h says why not
// NSS): an account NSS alone knows (LDAP) keeps only $HOME's preset.
using base::passwd_home;

}  // namespace profile
