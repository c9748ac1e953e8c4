// The PATH... arguments after `--` of status, diff, save and apply: paths
// relative to the target (an absolute path beneath it is accepted too; a
// directory brings its subtree) or globs (base::PathFilter).
#pragma once
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"

// Each argument made relative to the target; false with *error set when
// one lies outside it.
bool normalize_path_args(const std::string& target, const std::vector<std::string>& raw, std::vector<std::string>* out,
                         std::string* error);

// An argument (made relative) that selects none of the changes is a typo,
// or a path given relative to the current dir rather than the target, far
// more often than a wish: one stderr line each says so and names the target
// (`layover: VERB: 'src/a.c' matches no change (paths are relative to ...;
// 'layover status NAME' lists the changes)`). `lister` is that command, for
// the session or patch file the paths were given for (lister_of).
void warn_unmatched_paths(const char* verb, const std::string& target, const std::string& lister,
                          const std::vector<std::string>& rel, const std::vector<capture::Change>& changes);
// The same lines for arguments found unmatched already (save: by its walk).
void warn_unmatched(const char* verb, const std::string& target, const std::string& lister,
                    const std::vector<std::string>& unmatched);
// The command that lists the changes of a session (`layover status NAME`)
// or of a patch file (`layover show FILE`), escaped for the terminal.
std::string lister_of(const std::string& source, bool session);

// Keep only the changes the arguments select (status; an argument that
// selects none is warned about, warn_unmatched_paths).
bool select_paths(const std::string& target, const std::string& lister, const std::vector<std::string>& raw,
                  std::vector<capture::Change>* changes, std::string* error);
