// Render a patch's diff to stdout or a pager: shared by `layover diff` and
// the exit-review prompt's [r].
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"

namespace review {

struct ShowOptions {
    enum class Format { Patch, Stat, NameStatus };
    Format format = Format::Patch;
    bool color = false;
    bool escape = false;  // terminal output: control characters made visible
    bool page = false;
    bool hunk_numbers = false;         // --hunk-numbers
    int width = 80;                    // --stat columns
    std::vector<std::string> paths;    // scope (empty: everything)
    std::vector<std::string> exclude;  // left out of it (--exclude globs)
    std::string header;                // written before the first file (risk lines), when there is one
    std::function<std::string(const std::string&)> filter = nullptr;  // applied to each file's text
    int old_root = -1;  // the old sides' tree, when not the target (a session's view: diff --steps, diff A B)
    // Patch format, more than one step record: files grouped by the last step
    // that touched them, each group after a "# step N: LABEL" line git apply
    // ignores (review/diff/step_groups.h). --flat: one lump.
    bool flat = false;
};

// Returns whether the selection holds any change (diff's exit 1 vs 0).
// Notes for a person go to stderr.
base::Result<bool> show_diff(const capture::Patch& patch, const ShowOptions& opts);

// Terminal facts for stdout: is it a tty, and its width (80 otherwise, or $COLUMNS).
bool stdout_is_tty();
int terminal_width();

}  // namespace review
