// The first-run checks, done on the host before any namespace: where the
// command starts, host paths it names that it would not see inside, and a
// git work tree whose .git lies above the target.
#pragma once
#include <string>
#include <vector>

#include "helper/base/result.h"

namespace first_run {

// True for a path the sandbox replaces with its own mounts (/tmp, /var/tmp,
// /run, /dev, /proc, /sys and below): the host's content is not there. Pure.
bool replaced_inside(const std::string& abs_path);

struct Visibility {
    std::string target;
    std::vector<std::string> hidden;  // hidden mounts (HidePlan::mounts)
    std::vector<std::string> shown;   // --ro and --rw paths, shown at the same path
};

// Why the host path `abs` is not what the command would see inside, or ""
// when it is. Pure.
std::string unseen_reason(const std::string& abs, const Visibility& v);

struct Start {
    std::string dir;     // where the command starts
    std::string notice;  // a line for stderr when it is not the caller's cwd
};

// --cwd DIR when given (inside the target, or visible read-only), else the
// caller's cwd when it lies inside the target, else the target's root.
base::Result<Start> start_dir(const std::string& caller_cwd, const std::string& given, const Visibility& v);

// The first host path among the command (when it names one) and its
// arguments that are existing files, which the sandbox would not show:
// a one-line error naming it and the fix, or "".
std::string check_command_paths(const std::vector<std::string>& command, const std::string& cwd, const Visibility& v);

// The .git of a work tree holding the target, when it lies above the target
// (found by walking up from the target's parent); "" when there is none.
std::string git_dir_above(const std::string& target);

}  // namespace first_run
