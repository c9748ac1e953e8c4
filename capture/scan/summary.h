// The short, human summary of a change list (as `git status --short`):
// one line per change, a status letter then the display-escaped path, then a
// total line. Pure; used by status, show and the exit prompt.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "capture/scan/change.h"

namespace capture {

// stale: paths whose base is stale (marked "(changed on disk since copy-up)").
std::string summary_text(const std::vector<Change>& changes, const std::set<std::string>& stale = {});
std::string summary_line(const Change& c, bool stale = false);
std::string total_line(const std::vector<Change>& changes);

}  // namespace capture
