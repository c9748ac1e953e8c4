#include "capture/scan/entry/dircursor.h"

#include <fcntl.h>

#include "helper/base/text.h"

namespace capture {

base::Result<int> DirCursor::parent_of(const std::string& path, std::string* name) {
    std::vector<std::string> comps;
    size_t start = 0;
    for (;;) {
        size_t slash = path.find('/', start);
        if (slash == std::string::npos) {
            *name = path.substr(start);
            break;
        }
        comps.push_back(path.substr(start, slash - start));
        start = slash + 1;
    }
    size_t keep = 0;
    while (keep < names_.size() && keep < comps.size() && names_[keep] == comps[keep]) keep++;
    names_.resize(keep);
    fds_.resize(keep);
    for (size_t i = keep; i < comps.size(); i++) {
        int at = i == 0 ? root_ : fds_.back().get();
        auto fd = base::open_at(at, comps[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (!fd)
            return base::error("opening dir " + base::display_path(comps[i]) + " of " + base::display_path(path) +
                               ": " + fd.error().message);
        names_.push_back(comps[i]);
        fds_.push_back(std::move(fd.value()));
    }
    return comps.empty() ? root_ : fds_.back().get();
}

}  // namespace capture
