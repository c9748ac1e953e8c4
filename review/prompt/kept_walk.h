// The hunk-by-hunk walk of `apply -p` and of the exit prompt's `hunks`,
// with its answers kept (answers.h) until the apply they chose happens: the
// answers kept from the last walk of the same session or patch to the same
// target are offered first, and the answers of this walk replace them. Both
// keep theirs in one place, so each reuses the other's.
#pragma once
#include <string>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/prompt/hunk_walk.h"

namespace review {

// Where the answers of a walk of `patch` (a session's, whose dir is
// `session_dir`, or a patch file) to `target` are kept; "" when there is no
// state dir to keep them in.
std::string kept_answers_place(const capture::Patch& patch, const std::string& target, const std::string& session_dir);

struct KeptWalk {
    std::string file;  // where the answers of this walk are kept ("" when they could not be)
    size_t count = 0;  // how many
};

// walk_hunks(patch, wo) after offering the answers kept at `place` (asked
// on the terminal, "[Y/n]"); then the walk's answers are kept there, or
// dropped when it chose nothing. An EOF or Ctrl+C at the offer is a walk
// `interrupted`. `lead` starts each line: "layover: apply: ", "layover: ".
base::Result<WalkResult> walk_keeping(const capture::Patch& patch, const std::string& target, const std::string& place,
                                      WalkOptions wo, const std::string& lead, KeptWalk* kept);

}  // namespace review
