// Risky destinations: changes a person should look at twice before applying
// (startup files, credentials, hooks, executables, widened modes, symlinks
// leading out of the target). Pure, so every rule is unit-tested.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"
#include "review/prompt/secrets.h"

namespace review {

struct RiskContext {
    // The user's home relative to the target: "" when the target is $HOME,
    // "u" for target /home and home /home/u; nullopt when home is not inside
    // the target (then home-anchored rules such as ~/.ssh cannot match).
    std::optional<std::string> home_rel;
    // $XDG_CONFIG_HOME/layover relative to the target, when it is set and
    // inside it: layover's config file may live there instead of ~/.config.
    std::optional<std::string> config_rel = std::nullopt;
    // Does the real directory (relative to the target; "" the target itself)
    // hold a Makefile or *.mk already? Unset: as if not.
    std::function<bool(const std::string&)> dir_has_makefile = nullptr;
    // Does the real directory (relative to the target) hold a `.git` (a
    // repository, a worktree's or submodule's file)? Unset: as if not.
    std::function<bool(const std::string&)> dir_is_git_repo = nullptr;
    // What the contents say, by path (secrets, npm scripts, editor tasks):
    // filled by add_content_risks (review/prompt/risk_scan.h).
    std::map<std::string, std::vector<std::string>> content = {};
    // The secrets among them, path by path in change order.
    std::vector<std::pair<std::string, SecretHit>> secrets = {};
    // Home paths the rules name that are symlinks on the real tree leading
    // within it (dotfiles kept elsewhere, e.g. by GNU stow): the path each
    // leads to, relative to the target -> the home-relative path it stands
    // for. Filled by add_home_links (review/prompt/risk_links.cc).
    std::vector<std::pair<std::string, std::string>> home_links = {};
};

// home_rel for a target and $HOME (both absolute, symlink-free).
std::optional<std::string> home_relative(const std::string& target, const std::string& home);

// The home-relative paths the home rules name (a trailing '/': a subtree).
std::vector<std::string> home_rule_paths();

// Reasons this change is risky (empty: not flagged), short phrases such as
// "shell startup file" or "symlink leads outside the target".
std::vector<std::string> risks_of(const capture::Change& c, const RiskContext& ctx);

// "  ! shell startup file, executable" ("" for none): a change's risk marks
// as every listing appends them to its line (status, diff, the exit prompt,
// show, the apply list). The one place that spaces them.
std::string marks_text(const std::vector<std::string>& reasons);

}  // namespace review
