#include "capture/scan/layers/stack.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "helper/base/text.h"

namespace capture {

namespace {

// base::list_dir without its dup, fstat and DIR: getdents64 on the fd
// itself, from its start. Deep stacks list many small layer dirs.
base::Result<std::vector<base::DirEntry>> list_raw(int fd) {
    if (::lseek(fd, 0, SEEK_SET) != 0) return base::sys_error("rewinding dir");
    std::vector<base::DirEntry> out;
    alignas(8) char buf[32768];
    for (;;) {
        long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n < 0) return base::sys_error("readdir");
        if (n == 0) break;
        for (long at = 0; at < n;) {
            auto* e = reinterpret_cast<struct dirent64*>(buf + at);
            at += e->d_reclen;
            const char* nm = e->d_name;
            if (nm[0] == '.' && (nm[1] == '\0' || (nm[1] == '.' && nm[2] == '\0'))) continue;
            out.push_back({nm, e->d_type});
        }
    }
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

base::Result<UpperListing> list_upper(const UpperDir& d, const std::string& what) {
    UpperListing out;
    auto indexed = [&](size_t k) { return k < d.idx.size() ? d.idx[k] : nullptr; };
    if (d.fds.size() == 1) {
        if (const LayerIndex::Dir* x = indexed(0)) {
            out.names = x->names;
            return out;
        }
        auto names = base::list_dir(d.fds[0]);
        if (!names) return names.error().context("listing " + what);
        out.names = std::move(names.value());
        return out;
    }
    std::vector<std::vector<base::DirEntry>> each;
    for (size_t k = 0; k < d.fds.size(); k++) {
        if (const LayerIndex::Dir* x = indexed(k)) {
            each.push_back(x->names);
            continue;
        }
        auto names = list_raw(d.fds[k]);
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
                                  bool* cut, const std::string& path, const std::vector<const LayerIndex*>& indexes) {
    UpperDir sub;
    uint32_t at = l.holder(i);
    auto index_of = [&](uint32_t k) -> const LayerIndex::Dir* {
        uint32_t id = d.ids[k];
        return id < indexes.size() && indexes[id] ? indexes[id]->find(path) : nullptr;
    };
    sub.fds.push_back(top.get());
    sub.ids.push_back(d.ids[at]);
    sub.owned.push_back(std::move(top));
    sub.idx.push_back(index_of(at));
    sub.rel.emplace_back();
    layers::Descent down(top_opaque);
    const std::string& name = l.names[i].name;
    if (!l.holders.empty()) {
        for (size_t h = 1; h < l.holders[i].size() && !down.done(); h++) {
            const layers::Holder& below = l.holders[i][h];
            int parent = d.fds[below.layer];
            std::string joined;
            const std::string& here = d.name_in(below.layer, name, &joined);
            unsigned char type = below.type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                if (::fstatat(parent, here.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
                    return base::sys_error("reading layer entry " + base::display_path(name));
                type = S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
            }
            if (type != DT_DIR) {
                down.joins(layers::Below::Other);
                break;
            }
            // Indexed: its names and mark are known, and it only serves as
            // the parent of what it holds: not opened (UpperDir::rel).
            if (const LayerIndex::Dir* known = index_of(below.layer)) {
                down.joins(known->mark == 'y' ? layers::Below::OpaqueDir : layers::Below::Dir);
                sub.fds.push_back(parent);
                sub.ids.push_back(d.ids[below.layer]);
                sub.idx.push_back(known);
                sub.rel.push_back(here);
                continue;
            }
            int fd = ::openat(parent, here.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0) return base::sys_error("opening layer dir " + base::display_path(name));
            base::Fd dir(fd);
            std::string mark = opaque_mark(dir.get());
            down.joins(mark == "y" ? layers::Below::OpaqueDir : layers::Below::Dir);
            sub.fds.push_back(dir.get());
            sub.ids.push_back(d.ids[below.layer]);
            sub.owned.push_back(std::move(dir));
            sub.idx.push_back(nullptr);
            sub.rel.emplace_back();
        }
    }
    *cut = down.cut();
    return sub;
}

}  // namespace capture
