// A hunk walk's `n` in a session (hunk_walk.h): an optional reason asked for,
// and a rejection made of it (rejected.h), recorded in the session only once
// the walk ends (`q` too; Ctrl+C or EOF takes nothing, neither the changes
// nor the rejections).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/store/records/rejections.h"
#include "review/diff/format.h"
#include "review/diff/pieces.h"
#include "review/prompt/rejected.h"

namespace review {

class WalkRejections {
public:
    // session_dir "": nothing is asked or recorded.
    WalkRejections(const capture::Patch& patch, const std::string& session_dir)
        : patch_(patch), session_dir_(session_dir) {}

    // A new change is reached: the fingerprints taken for the last are dropped.
    void next_change() { prints_.reset(); }
    // `n` to hunk `hunk` (1-based; 0: the change whole) of `c`: asks why, and
    // keeps the rejection for record(). The change's fingerprints are taken at
    // its first `n` (from the diff shown, `f`, for a file's hunks) and kept for
    // the file's other hunks.
    void reject(const capture::Change& c, size_t hunk, const Side& real, const Side& mine,
                const FileHunks* f = nullptr);
    // The session's side of a change shown whole (see walk_rejections.cc).
    Side session_side(const capture::Change& c) const;
    // Writes the rejections kept, saying how many.
    void record();

private:
    const capture::Patch& patch_;
    const std::string& session_dir_;
    std::optional<ChangePrints> prints_;
    std::vector<session::Rejection> rejected_;
};

}  // namespace review
