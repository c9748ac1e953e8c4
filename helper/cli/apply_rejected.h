// `apply SESSION` skips what a person rejected (`layover reject`), unless
// --include-rejected: a whole-change rejection in force becomes an --exclude
// of that path, a hunk rejection an --exclude-hunks of the hunk's number
// today (review/prompt/rejected_patch.h). Says on stderr what it skips.
#pragma once
#include <string>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"

base::Result<void> skip_rejected(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts);
