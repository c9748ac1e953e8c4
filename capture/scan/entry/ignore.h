// Which changes review leaves out (docs/design.md "Ignore rules"): the
// built-in list of pure caches, the REAL target's .layoverignore and
// --ignore GLOB. Ignored paths are neither shown nor applied nor saved; they
// stay in the session's upper layer, and --include-ignored brings them back.
#pragma once
#include <string>
#include <vector>

#include "helper/base/gitignore.h"
#include "helper/base/result.h"

namespace capture {

struct IgnoreOptions {
    bool include_ignored = false;    // --include-ignored: show and carry them (flagged)
    bool no_defaults = false;        // --no-default-ignores
    std::vector<std::string> globs;  // --ignore GLOB (gitignore syntax), after the file's rules
};

// The rules file, read only from the real target's root.
inline constexpr char kIgnoreFile[] = ".layoverignore";

// Pure: the built-in list as gitignore lines. Home caches (~/.cache/ and
// the like) are anchored at the home directory's place in the target, and
// left out when the home is not in the target (a project's own .cache/ is
// shown: it is not known to be a cache).
std::vector<std::string> default_ignore_lines(const std::string& target, const std::string& home);

// Defaults, then TARGET/.layoverignore (opened beneath target_fd without
// following a symlink; a symlink or non-regular file there is an error),
// then the --ignore globs. Home: $HOME.
base::Result<base::IgnoreRules> load_ignore_rules(int target_fd, const std::string& target, const IgnoreOptions& opts);

// "+ 1,234 paths in ignored caches (--include-ignored to show them)";
// saved: for a patch file, which left them out ("(left out when saved)").
std::string ignored_line(uint64_t n, bool saved = false);

// One of --ignore GLOB, --ignore=GLOB, --include-ignored, --no-default-ignores:
// 1 (taken; i advanced past a value), 0 (not one), -1 (*error set).
int parse_ignore_flag(int argc, char** argv, int* i, IgnoreOptions* opts, std::string* error);
extern const char kIgnoreFlagsHelp[];

}  // namespace capture
