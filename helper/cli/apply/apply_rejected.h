// `apply SESSION` skips what a person rejected (`layover reject`), unless
// --include-rejected: a whole-change rejection in force becomes an --exclude
// of that path, a hunk rejection an --exclude-hunks of the hunk's number
// today (review/prompt/rejected_patch.h). Says on stderr what it skips.
#pragma once
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"

base::Result<void> skip_rejected(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts);

// stderr: "layover: DOING N rejected change(s) (HINT):" and each skipped
// line, then "layover: NOT_DOING: LINE" for each superseded one.
void say_rejected(const char* doing, const char* hint, const char* not_doing, const std::vector<std::string>& skipped,
                  const std::vector<std::string>& superseded);
