// `apply -p` (and the exit prompt's [p]): walk the changes hunk by hunk, as
// git add -p does, and turn the answers into the selection --hunks,
// --exclude-hunks and --exclude make, for the ordinary apply. Reads each file
// only when it is reached, so the first question comes at once. Needs a
// terminal on stdin; asks on stderr.
#pragma once
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/glob.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"
#include "review/diff/hunks.h"
#include "review/prompt/answers.h"
#include "review/prompt/risk.h"

namespace review {

// Conflicts apply's check found before a walk (walk_conflicts.h), by path.
using WalkConflicts = std::map<std::string, Conflict, std::less<>>;

// What a walk does with a change that conflicts (walk_conflicts.h): leave it
// out unasked (apply would refuse it), or ask about it whole, `y` then
// overwriting the target's version (--force given) or taking it whole for
// the exit prompt's [a], which offers to overwrite it.
enum class OnConflict { Skip, Forced, Prompt };

struct WalkOptions {
    int root = -1;            // the target tree (real files are read beneath it)
    base::PathFilter filter;  // only the changes it selects (the command line's --only/--exclude)
    // Set: `n` asks for a reason and records a rejection there, all of them
    // once the walk ends (`q` too; not on EOF or Ctrl+C), saying how many.
    std::string session_dir;
    // Answers kept from an earlier walk (answers.h): a hunk or change whose
    // key has one takes it without a question (an `n` then records no
    // rejection: the earlier walk did).
    const Answers* saved = nullptr;
    // Set: each change's risk marks ("! executable") follow its line, as
    // every listing shows them.
    const RiskContext* risks = nullptr;
    // Set: each change that conflicts is said in one line before its
    // questions, and handled as `on_conflict` says.
    const WalkConflicts* conflicts = nullptr;
    OnConflict on_conflict = OnConflict::Skip;
};

struct WalkResult {
    // The answers as apply's selection: --only these (globs matching only
    // the path, and its subtree), --exclude those (declined beneath a path
    // taken), --hunks for the files taken in part. `all`: every change was
    // taken whole (no selection needed).
    std::vector<std::string> only, exclude;
    HunkChoices hunks;
    size_t taken = 0;  // changes taken whole or in part
    bool all = false;
    bool quit = false;         // `q`: nothing after it was asked
    bool interrupted = false;  // EOF or Ctrl+C: take nothing
    Answers answers;           // every answer given or reused, to keep for another try
    size_t reused = 0;         // of them, taken from WalkOptions::saved
};

base::Result<WalkResult> walk_hunks(const capture::Patch& patch, const WalkOptions& o);

// Pure: `path` as an --only entry and as an --exclude glob that select
// only it (and its subtree): anchored, with \ before * ? [ \ when needed.
std::string only_entry(const std::string& path);
std::string exclude_entry(const std::string& path);

}  // namespace review
