// The step flags of status, diff, save and apply (docs/history.md):
// --step N and --steps N..M (those steps' own changes), --upto N (steps 1..N).
#pragma once
#include <string>
#include <vector>

#include "capture/scan/entry/step_range.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/store/session/session.h"

namespace cli {

struct StepArgs {
    enum class Kind { None, Range, Upto } kind = Kind::None;
    int from = 0, to = 0;
    std::string error;  // a malformed value, reported after parsing (so --help still wins)
    bool given() const { return kind != Kind::None; }
};

// argv[*i] when it is one of the step flags `allowed` lists ("--step",
// "--steps", "--upto"; "--flag VALUE" or "--flag=VALUE"): 1 and *i moved past
// its value; 0 when it is not. A malformed value sets a->error (usage, exit
// 2, once the whole command line is read).
int parse_step_flag(int argc, char** argv, int* i, const char* allowed, StepArgs* a);

// The range to capture for session `s`: errors for a running session, a step
// it does not have, a squashed step (exit 1).
base::Result<capture::StepRange> resolve_steps(const StepArgs& a, const session::Info& s, const char* verb);

// The same for a SESSION|PATCH argument (apply, diff): no flag, everything;
// a patch file with a step flag is an error (a patch holds no layers).
// `flags`: how the error names them ("--upto takes").
base::Result<capture::StepRange> steps_of_source(const std::string& source, const StepArgs& a, const char* flags);
// Its usage mistake alone, checked first by apply and diff (exit 2, in
// usage_error's form): a step flag given with a patch file; "" otherwise.
std::string step_flag_on_patch(const std::string& source, const StepArgs& a, const char* flags);

// diff's sources: SESSION with --step/--steps, or `diff A B` where B (the
// first path, given before any --) names an existing
// session: then *source becomes B and the range is against A (compare).
base::Result<capture::StepRange> diff_range(std::string* source, std::vector<std::string>* paths, size_t dashdash_at,
                                            const StepArgs& a);
// compare A B: B's range against A, both kept sessions of one target.
base::Result<capture::StepRange> compare_range(const session::Info& a, const session::Info& b);

// The tree diff reads the old sides from for range `r` of session `source`:
// the view before the range (--steps from 2 on) or the other session's view
// (diff A B), mounted read-only (steps::open_view); an invalid fd for the
// real tree itself.
base::Result<base::Fd> old_side_view(const std::string& source, const capture::StepRange& r);

// After a rollback or revert of a session that is not running, which
// leave the recorded change count unknown: the count `sessions` shows, of
// the view they made (unknown, it would count the live layer alone: `~0`
// beside steps holding changes). A count of 0 stays unknown: recorded, the
// state would be `empty`, which gc removes, with what a rollback set aside.
void recount_view(session::Info s, const session::Meta& m);

}  // namespace cli
