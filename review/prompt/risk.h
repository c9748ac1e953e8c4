// Risky destinations: changes a person should look at twice before applying
// (startup files, credentials, hooks, executables, widened modes, symlinks
// leading out of the target). Pure, so every rule is unit-tested.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "capture/scan/change.h"

namespace review {

struct RiskContext {
    // The user's home relative to the target: "" when the target is $HOME,
    // "u" for target /home and home /home/u; nullopt when home is not inside
    // the target (then home-anchored rules such as ~/.ssh cannot match).
    std::optional<std::string> home_rel;
    // $XDG_CONFIG_HOME/layover relative to the target, when it is set and
    // inside it: layover's config file may live there instead of ~/.config.
    std::optional<std::string> config_rel = std::nullopt;
};

// home_rel for a target and $HOME (both absolute, symlink-free).
std::optional<std::string> home_relative(const std::string& target, const std::string& home);

// Reasons this change is risky (empty: not flagged), short phrases such as
// "shell startup file" or "symlink leads outside the target".
std::vector<std::string> risks_of(const capture::Change& c, const RiskContext& ctx);

}  // namespace review
