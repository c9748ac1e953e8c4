// A session's rejections judged against its changes now, reading the
// session's and the real version of each rejected path from its two trees
// (the live upper over its steps, and the target): `status`,
// `reject`, `rejections` and `discard --rejected`. `apply` judges from the
// patch it opened instead (review/prompt/rejected.h, the same rule).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/store/session/session.h"
#include "review/prompt/rejected.h"

// The two readers over the session's trees (kept open by the readers).
struct SessionSides {
    review::SideOf session_side, real_side;
};
base::Result<SessionSides> session_sides(const session::Info& info);
// Over trees already open (one flattening of the steps at a time: a second
// open_session_trees replaces the first one's flattened upper).
SessionSides sides_of(std::shared_ptr<capture::SessionTrees> trees);

base::Result<std::vector<review::RejectionState>> session_rejections(const session::Info& info,
                                                                     const std::vector<capture::Change>& changes);

// The session has a rejections file with records in it (a cheap look).
bool has_rejections(const session::Info& info);

// `status --json`'s per-change field: `, "rejected": [...]`, the rejections
// of `path` in force (rejection_json each), [] when none.
std::string rejected_field(const std::vector<review::RejectionState>& all, const std::string& path);

// The records as `rejections --json` and `status --json` carry them:
// {"seq", "path" [, "path_b64"], "hunk", "hunk_now", "reason", "time", "state"}
// with state "rejected" (in force) or "superseded", and "why" when superseded.
std::string rejection_json(const review::RejectionState& s);
