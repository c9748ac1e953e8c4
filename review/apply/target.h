// Which tree a patch is applied to, and the rules a target must meet
// (docs/security.md "Patches from someone else"): a patch file names its
// own target, so that name is checked before anything is opened.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace review {

struct Target {
    std::string path;  // canonical (symlinks in its parents resolved)
    base::Fd fd;
    uint64_t dev = 0, ino = 0;
};

// Pure: "" when path is an absolute, canonical path (no empty, "." or ".."
// components, no trailing '/') other than "/" and not under /proc, /sys or
// /dev; otherwise why not.
std::string target_path_problem(const std::string& path);

// Pure: whether path is home or beneath it (both canonical; an empty or "/"
// home contains nothing).
bool within_home(const std::string& path, const std::string& home);

// Pure, on canonical paths: "" when an apply of `paths` (relative to the
// target) leaves layover's state dir alone; else the one-line refusal. A
// target at or inside the state dir is refused; a state dir inside the
// target is refused for a path at it, above it or beneath it.
std::string state_dir_problem(const std::string& target, const std::string& state,
                              const std::vector<std::string>& paths);

// The target of an apply: `given` (--target, absolute), else the manifest's,
// which for a patch file (not a session of the caller's) must then be the
// caller's home or beneath it. The target itself may not be a symlink;
// symlinks in its parents (a `/home -> /usr/home`) are resolved.
base::Result<Target> open_target(const std::string& given, const capture::Patch& patch);

}  // namespace review
