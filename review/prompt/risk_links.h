// The home rules' paths that are symlinks on the real tree (review/prompt/
// risk.h, RiskContext::home_links): a change to where one leads is marked
// as a change to the home path itself.
#pragma once
#include <string>

#include "review/prompt/risk.h"

namespace review {

// Fills ctx->home_links for `target` (the real tree, read as it is now; its
// home is ctx->home_rel): each home rule's path and every dir above it that
// is a symlink leading within the target. Nothing when home_rel is unset.
void add_home_links(RiskContext* ctx, const std::string& target);

}  // namespace review
