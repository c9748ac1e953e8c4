// What a reviewer of a patch from someone else must see before it is
// applied (issue 21): the target it names, and per change its mode (and
// mode change), size and the exit prompt's risk marks. Used by `show`,
// `diff --stat` and the apply summary. Pure.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/patch/reader.h"
#include "review/prompt/risk.h"

namespace review {

// "target: /home/ann  (session S, created C)"; with a --target override
// both are named.
std::string target_line(const capture::Manifest& m, const std::string& override_target = "");

// "  [0755 -> 0644, 12 B]  ! executable, ..." (leading two spaces; "" for
// nothing to add): the details appended to a change's line.
std::string change_details(const capture::Change& c, const RiskContext& ctx);

// "  ! executable, shell startup file" ("" when not flagged): the marks alone.
std::string risk_marks(const capture::Change& c, const RiskContext& ctx);
// What `diff --stat` adds for a reviewer (git's table cannot show it): each
// selected change with a risk mark or a set-id or sticky bit, as `show` lists
// it: "A  .bashrc  [0644, 15 B]  ! shell startup file", "A  shared/  [1777]".
std::vector<std::string> marked_changes(const std::vector<capture::Change>& changes, const RiskContext& ctx,
                                        const std::function<bool(std::string_view)>& selected);

// The risk context of a manifest's target for the caller ($HOME).
RiskContext risk_context_for(const std::string& target);

}  // namespace review
