// Opens entries of a tree by relative path one component at a time
// (openat with O_NOFOLLOW, never through a symlink), keeping the chain of
// open parent dirs of the last path so a walk-ordered sequence of paths costs
// one openat per new dir, at any depth (no PATH_MAX limit).
#pragma once
#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace capture {

class DirCursor {
public:
    explicit DirCursor(int root_fd) : root_(root_fd) {}
    // An fd of the parent dir of `path` (relative, '/'-separated), and its last name.
    base::Result<int> parent_of(const std::string& path, std::string* name);

private:
    int root_;
    std::vector<std::string> names_;  // components of the open chain
    std::vector<base::Fd> fds_;
};

}  // namespace capture
