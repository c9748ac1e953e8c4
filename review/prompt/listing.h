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

// A change's path for the terminal (base::display_path), with a '/' after
// a directory's ("build/"), as status, show and apply list them.
std::string shown_path(const capture::Change& c);

// "  [0755 -> 0644, 12 B]  ! executable, ..." (leading two spaces; "" for
// nothing to add): the details appended to a change's line.
std::string change_details(const capture::Change& c, const RiskContext& ctx);

// "  ! executable, shell startup file" ("" when not flagged): the marks alone.
std::string risk_marks(const capture::Change& c, const RiskContext& ctx);
// The risk lines `diff` prints before the diff (stderr, or the pager's
// head): "layover: N changes marked ! need a careful look:" and each
// selected flagged change's line as `status` lists it, indented
// ("  A  .bashrc  ! shell startup file"); "" when none is flagged. With
// details (`diff --stat`, whose table cannot show them), each line as `show`
// lists it, with its mode and size ("  A  .bashrc  [0644, 15 B]  ! shell
// startup file"), and then the unflagged changes with a set-id or sticky bit
// under "layover: N changes with a set-id or sticky bit:" ("  A  keep/  [1755]").
std::string risk_lines(const std::vector<capture::Change>& changes, const RiskContext& ctx,
                       const std::function<bool(std::string_view)>& selected, bool details);

// The risk context of a manifest's target for the caller ($HOME).
RiskContext risk_context_for(const std::string& target);

}  // namespace review
