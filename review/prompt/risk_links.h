// The home rules' paths that are symlinks on the real tree (review/prompt/
// risk.h, RiskContext::home_links): a change to where one leads is marked
// as a change to the home path itself.
#pragma once
#include <string>

#include "review/prompt/risk.h"

namespace review {

// Fills ctx->home_links for `target` (the real tree, read as it is now):
// each home rule's path, and every dir above it, that is a symlink leading
// within the target, under the home ctx->home_rel places in the target and
// under the caller's $HOME wherever it is (~/.bashrc -> ~/dotfiles/...
// while the target is ~/dotfiles).
void add_home_links(RiskContext* ctx, const std::string& target);

}  // namespace review
