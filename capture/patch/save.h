// Capture a session's upper layer into a patch file (atomic: temp + rename,
// created 0600). Used by `layover save`, `run --on-exit save:FILE`, the
// prompt's [s], and Patch::open_source for sessions.
#pragma once
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "helper/store/session.h"

namespace capture {

struct SaveOptions {
    std::vector<std::string> only;  // if non-empty: capture only these paths (and their subtrees)
};

base::Result<void> save_session(const session::Info& s, const std::string& out_file, const SaveOptions& opts = {});

}  // namespace capture
