#include "capture/scan/stack.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <cerrno>

#include "helper/base/text.h"

namespace capture {

base::Result<UpperListing> list_upper(const UpperDir& d, const std::string& what) {
    UpperListing out;
    if (d.fds.size() == 1) {
        auto names = base::list_dir(d.fds[0]);
        if (!names) return names.error().context("listing " + what);
        out.names = std::move(names.value());
        return out;
    }
    std::vector<std::vector<base::DirEntry>> each;
    for (int fd : d.fds) {
        auto names = base::list_dir(fd);
        if (!names) return names.error().context("listing " + what);
        each.push_back(std::move(names.value()));
    }
    for (auto& m : layers::merge_listings(std::move(each))) {
        out.names.push_back(std::move(m.entry));
        out.holders.push_back(std::move(m.holders));
    }
    return out;
}

namespace {

// user.overlay.opaque of a lower layer's dir: "y" opaque, "x" may hold xattr whiteouts.
std::string opaque_mark(int fd) {
    char v[4];
    ssize_t n = ::fgetxattr(fd, "user.overlay.opaque", v, sizeof v);
    return n > 0 ? std::string(v, static_cast<size_t>(n)) : std::string();
}

}  // namespace

base::Result<UpperDir> merged_dir(const UpperDir& d, const UpperListing& l, size_t i, base::Fd top, bool top_opaque,
                                  bool* cut) {
    UpperDir sub;
    uint32_t at = l.holder(i);
    sub.fds.push_back(top.get());
    sub.ids.push_back(d.ids[at]);
    sub.owned.push_back(std::move(top));
    layers::Descent down(top_opaque);
    const std::string& name = l.names[i].name;
    if (!l.holders.empty()) {
        for (size_t h = 1; h < l.holders[i].size() && !down.done(); h++) {
            const layers::Holder& below = l.holders[i][h];
            int parent = d.fds[below.layer];
            unsigned char type = below.type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
                    return base::sys_error("reading layer entry " + base::display_path(name));
                type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
            }
            if (type != DT_DIR) {
                down.joins(layers::Below::Other);
                break;
            }
            int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) return base::sys_error("opening layer dir " + base::display_path(name));
            base::Fd dir(fd);
            std::string mark = opaque_mark(dir.get());
            down.joins(mark == "y" ? layers::Below::OpaqueDir : layers::Below::Dir);
            if (mark == "x") sub.xwh = true;
            sub.fds.push_back(dir.get());
            sub.ids.push_back(d.ids[below.layer]);
            sub.owned.push_back(std::move(dir));
        }
    }
    *cut = down.cut();
    return sub;
}

}  // namespace capture
