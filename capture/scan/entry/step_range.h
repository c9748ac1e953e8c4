// Which layers of a session a capture reads (docs/history.md).
#pragma once
#include <string>

namespace capture {

// All of them with the live upper (from 0), or steps from..to alone, against
// the view just before `from` (steps from-1..1 over the target, a read-only
// overlay: steps::open_view). The caller checks that the steps exist
// (helper/cli/common/step_args.h).
// With `against` (compare: another session's dir, of the same target), all
// of this session against that session's final view instead of the real
// tree: the changes from that view to this one (steps::compare_upper).
struct StepRange {
    int from = 0, to = 0;
    std::string against;
    bool all() const { return from == 0; }
};

}  // namespace capture
