// `apply -p`: the walk on the terminal (review/prompt/hunk_walk.h), whose
// answers narrow the apply as --only, --exclude and --hunks do, and the
// answers kept until that apply happens (review/prompt/answers.h): a
// conflict, a failure or a cancel keeps them, and the next `apply -p` of the
// same patch or session to the same target offers to reuse them.
#pragma once
#include <string>

#include "capture/patch/reader.h"
#include "review/apply/apply.h"

namespace cli {

enum class Walked { Chosen, Nothing, Failed };

// The answers of one walk, kept on disk until applied() says they were.
class KeptAnswers {
public:
    KeptAnswers() = default;
    ~KeptAnswers();
    KeptAnswers(const KeptAnswers&) = delete;
    KeptAnswers& operator=(const KeptAnswers&) = delete;
    // The apply chose by them happened (or there was nothing to apply): dropped.
    void applied();

    std::string file;  // where they are kept ("" when they could not be)
    size_t count = 0;
    bool done = false;
};

Walked walk_answers(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts,
                    KeptAnswers* kept);

}  // namespace cli
