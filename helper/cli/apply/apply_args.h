// `layover apply`'s command line: its options, read and checked before
// anything is opened (helper/cli/apply/apply.cc does the rest).
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capture/scan/entry/ignore.h"
#include "helper/base/result.h"
#include "helper/cli/common/step_args.h"
#include "review/apply/apply.h"
#include "review/diff/hunks.h"

namespace cli {

struct ApplyArgs {
    std::string source;
    review::ApplyOptions opts;
    capture::IgnoreOptions ignore;
    std::vector<std::string> paths;  // after --
    bool yes = false, json_out = false, allow_secrets = false, include_rejected = false;
    bool walk = false;                                    // -p: hunk by hunk
    std::vector<std::pair<std::string, bool>> hunk_args;  // (PATH:N,..., exclude?)
    cli::StepArgs steps;                                  // --upto N
};

// The verb's exit code when the command line ends it (--help: 0, a usage
// error: 2, said on stderr), else none: go on with *a.
std::optional<int> parse_apply_args(int argc, char** argv, ApplyArgs* a);

// One --hunks/--exclude-hunks value, its syntax checked (*error says what is wrong).
base::Result<review::HunkPick> hunk_pick(const std::string& arg, bool exclude, std::string* error);

}  // namespace cli
