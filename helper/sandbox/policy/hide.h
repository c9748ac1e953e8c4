// Which paths the sandbox hides (--hide, --hide-secrets), worked out on the
// host before any namespace: each is resolved (symlinks followed, so a
// symlinked home or ~/.ssh hides its real dir) and every bind-mount alias of
// it is added. overlay::hide_paths() mounts over them inside.
#pragma once
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "overlay/mountinfo.h"

struct HideRequest {
    std::string home;                 // $HOME as given (the secret paths hang below it)
    std::string target;               // resolved target
    std::string cwd;                  // for relative --hide paths
    bool secrets = true;              // --hide-secrets (default) / --no-hide-secrets
    std::vector<std::string> user;    // --hide PATH...
    std::vector<std::string> stores;  // undo stores apply keeps in trees (helper/store/records/undo_trees.h)
    std::string account_home;         // the user's home in the passwd database: its secrets too, when not $HOME
};

struct HidePlan {
    std::vector<std::string> mounts;      // absolute host paths to cover, aliases included
    std::vector<std::string> shown;       // "~/.ssh": the secrets the start-up line names (existing ones)
    std::vector<std::string> user_shown;  // "~/proj/.env": the --hide paths it names (existing ones)
    std::vector<std::string> in_target;   // relative to the target, existing or not: never captured
    std::vector<std::string> missing;     // absolute, missing on the host: kept missing inside (overlay/mask.h)
    std::vector<std::string> notes;       // "not hiding X: ..." for stderr
};

// mounts: the host's mount table (overlay::parse_mountinfo), for aliases.
base::Result<HidePlan> plan_hide(const HideRequest& req, const std::vector<overlay::MountEntry>& mounts);
