// A session's two trees (its upper layer and the real target), and the live
// change list behind `layover status`.
#pragma once
#include <vector>

#include "capture/change.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/session.h"

namespace capture {

struct SessionTrees {
    base::Fd upper, lower;
};
base::Result<SessionTrees> open_session_trees(const session::Info& s);

// The classified changes of a running or ended session (no base, no hashing
// beyond the copied-up-but-unchanged check).
base::Result<std::vector<Change>> session_changes(const session::Info& s);

}  // namespace capture
