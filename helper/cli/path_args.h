// The PATH... arguments after `--` of status, diff, save and apply: paths
// relative to the target (an absolute path beneath it is accepted too; a
// directory brings its subtree) or globs (base::PathFilter).
#pragma once
#include <string>
#include <vector>

#include "capture/scan/change.h"

// Each argument made relative to the target; false with *error set when
// one lies outside it.
bool normalize_path_args(const std::string& target, const std::vector<std::string>& raw, std::vector<std::string>* out,
                         std::string* error);

// Keep only the changes the arguments select.
bool select_paths(const std::string& target, const std::vector<std::string>& raw, std::vector<capture::Change>* changes,
                  std::string* error);
