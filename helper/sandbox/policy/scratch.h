// Writes outside the target: $HOME (and the XDG cache, config and data dirs)
// outside the target are writable inside through scratch layers of their
// own, kept in the session apart from the target's upper layer and never
// applied, saved or shown as changes. `--home ro` turns them off.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "helper/base/result.h"

namespace scratch {

// The roots to give scratch layers, from candidate dirs (absolute,
// symlink-free, existing): those outside the target (a root may contain it),
// not in a dir the sandbox replaces, not holding the state dir; nested
// candidates fold into the outer one. Pure. why_not gets a line for each
// candidate left out for a reason the user should know.
std::vector<std::string> choose_roots(const std::vector<std::string>& candidates, const std::string& target,
                                      const std::string& state, std::vector<std::string>* why_not);

// The session's dir for root number i: <session>/outside/<i>/{upper,work}.
std::string layer_dir(const std::string& session_dir, size_t i);

// What the scratch upper layers hold, for one line: the number of files and
// the top dirs they are under ("~/.npm", "~/.cache/pip"). Walked in the owner
// user namespace. Empty count: nothing was written outside.
struct Summary {
    uint64_t files = 0;
    uint64_t earlier = 0;            // of `files`, those an earlier run wrote (summarize's since_ns)
    std::vector<std::string> under;  // display names, most files first
    std::vector<uint64_t> counts;    // the files of each, as `under`
    std::vector<char> is_file;       // as `under`: the group is one file of a root (~/.bash_history)
    std::vector<std::string> paths;  // every entry, "~/..." or absolute (for status --outside)
};
// since_ns (run's exit of a resumed session: when the run began): entries
// whose ctime is older count in Summary::earlier too.
base::Result<Summary> summarize(const std::string& session_dir, const std::vector<std::string>& roots,
                                const std::string& home, int64_t since_ns = 0);

// "outside the target (not applied): 3,210 files under ~/.npm, ~/.cache/pip",
// and " (12 of them from earlier runs)" when some are. A group that is one
// file is named as it is, not as a dir the files are under: "1 file:
// ~/.bash_history", "3 files: ~/.bash_history, 2 under ~/code". Pure.
std::string summary_line(const Summary& s);

// Pure: the group a path below a root counts under ("~/.cache/pip" for
// ~/.cache/pip/x/y, "~/.npm" for ~/.npm/_cacache/z).
std::string group_of(const std::string& display_root, const std::string& rel);

}  // namespace scratch
