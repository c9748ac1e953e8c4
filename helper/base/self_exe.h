// The running binary's own path, and its directory (for finding the files
// installed beside it: layover-patch, the Python package).
#pragma once

#include <string>

namespace base {

// /proc/self/exe resolved; "" when /proc is not mounted.
std::string self_exe();

// The directory part of a path ("/a/b/layover" -> "/a/b").
std::string dir_of(const std::string& path);

}  // namespace base
