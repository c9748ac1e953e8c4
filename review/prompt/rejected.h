// Rejections tied to content (docs/review.md, "Rejections"): what `layover
// reject` records, and whether a recorded rejection is still in force. Pure
// but for the two side readers the caller gives (the session's version of a
// path and the real one), so `status`, `reject` (session trees) and `apply`
// (the patch and the target) judge alike.
//
// The rule: a whole-change rejection holds while the path is still a change
// whose fingerprint (kind, type, mode and the session's content) is the one
// rejected. A hunk rejection holds while, in addition, today's diff of the
// file (real file against the session's) has a hunk with the same removed
// and added lines; its number then is that hunk's, which may differ from the
// number it was rejected under (a partial apply renumbers). Anything else is
// superseded: the agent changed the file again, so a person looks again.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/scan/entry/change.h"
#include "helper/base/result.h"
#include "helper/store/records/rejections.h"
#include "review/diff/format.h"
#include "review/diff/hunks.h"

namespace review {

// An entry by path as a diff side (review/diff/source.h: regular files and
// symlinks exist; data unloaded past the reader's limit).
using SideOf = std::function<base::Result<Side>(const std::string& path)>;

// The whole change's fingerprint: 32 hex digits. A file too big to load is
// fingerprinted by its size.
std::string change_fingerprint(const capture::Change& c, const Side& session);
// One per hunk, in the diff's order (hunk N is [N-1]): the removed and added
// lines with the context between them, not the outer context or positions.
std::vector<std::string> hunk_fingerprints(std::string_view real, std::string_view session);
// The same from a diff already made (split lines, groups, hunk spans).
std::vector<std::string> hunk_fingerprints(const std::vector<std::string_view>& a,
                                           const std::vector<std::string_view>& b, const std::vector<Group>& groups,
                                           const std::vector<HunkSpan>& spans);
// Empty when the change has hunks (a modified regular text file, both sides
// loaded), else why not ("it is binary", "it is added, not modified", ...).
std::string why_no_hunks(const capture::Change& c, const Side& real, const Side& session);

struct RejectionState {
    session::Rejection rec;
    bool in_force = false;
    size_t hunk_now = 0;  // a hunk rejection in force: its number in today's diff
    std::string why;      // superseded: why, for a person
};

base::Result<std::vector<RejectionState>> judge_rejections(const std::vector<session::Rejection>& recs,
                                                           const std::vector<capture::Change>& changes,
                                                           const SideOf& session_side, const SideOf& real_side);

// A change's fingerprints taken once: apply -p's `n` records many of one
// file, each without hashing or diffing the file again.
struct ChangePrints {
    std::string change;              // change_fingerprint
    std::vector<std::string> hunks;  // hunk_fingerprints
};

// A new record for PATH (hunk 0: the whole change), its fingerprints taken
// now (or from `prints`, taken for PATH's change with these sides); an error
// (one line, with the fix) when PATH is no change or has no such hunk.
// `time` is stored as given.
base::Result<session::Rejection> make_rejection(const std::string& path, size_t hunk, const std::string& reason,
                                                const std::string& time, const std::vector<capture::Change>& changes,
                                                const SideOf& session_side, const SideOf& real_side,
                                                const ChangePrints* prints = nullptr);

// "proj/f [hunk 2] rejected: keep the old name" (terminal-safe), and with
// " (superseded: ...)" when no longer in force.
std::string rejection_line(const RejectionState& s);

}  // namespace review
