#include "helper/store/session/remove.h"

#include <fcntl.h>

#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/store/session/session.h"

base::Result<void> remove_tree_fast(const std::string& path) {
    auto slash = path.rfind('/');
    std::string parent = slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
    std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
    base::Fd dir(::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir.valid() && !name.empty() && review::remove_tree_at(dir.get(), name).ok()) return base::Ok();
    // Entries we do not own (or cannot chmod), or a tree deeper than our fds
    // reach: retry with full access inside an owner user namespace.
    return session::remove_tree(path);
}
