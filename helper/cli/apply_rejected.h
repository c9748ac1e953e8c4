// `apply SESSION` skips what a person rejected (`layover reject`), unless
// --include-rejected: a whole-change rejection in force becomes an --exclude
// of that path, a hunk rejection an --exclude-hunks of the hunk's number
// today (review/prompt/rejected.h has the rule). Says on stderr what it skips.
#pragma once
#include <string>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"
#include "review/prompt/rejected.h"

// The patch's new entry at a path as a diff side (what `review::make_rejection`
// and `judge_rejections` take as the session's side when a session was
// opened as a patch; `n` in `apply -p` records with it). Holds `patch` by reference.
review::SideOf patch_sides(const capture::Patch& patch);

base::Result<void> skip_rejected(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts);
