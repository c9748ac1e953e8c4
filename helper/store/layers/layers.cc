#include "helper/store/layers/layers.h"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "helper/base/dir.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"

namespace layers {

namespace {

bool has_xattr(int fd, const char* key, const char* want) {
    char buf[8];
    ssize_t n = ::fgetxattr(fd, key, buf, sizeof buf);
    if (n < 0) return false;
    return want == nullptr || std::string(buf, static_cast<size_t>(n)) == want;
}

base::Result<base::Fd> open_dir(int dirfd, const std::string& name) {
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return base::sys_error("opening layer dir " + name);
    return base::Fd(fd);
}

}  // namespace

bool is_whiteout(int dirfd, const std::string& name, const struct stat& st) {
    if (S_ISCHR(st.st_mode)) return st.st_rdev == makedev(0, 0);
    if (!S_ISREG(st.st_mode) || st.st_size != 0) return false;
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    bool w = has_xattr(fd, "user.overlay.whiteout", nullptr);
    ::close(fd);
    return w;
}

bool is_opaque(int dirfd) { return has_xattr(dirfd, "user.overlay.opaque", "y"); }

base::Result<Found> lookup(const Chain& chain, const std::string& name) {
    Found f;
    size_t n = chain.fds.size();
    size_t i = 0;
    for (; i < n; i++) {
        if (::fstatat(chain.fds[i].get(), name.c_str(), &f.st, AT_SYMLINK_NOFOLLOW) == 0) break;
        if (errno != ENOENT) return base::sys_error("reading layer entry " + name);
    }
    if (i == n) return f;
    bool target = chain.bottom_is_target && i == n - 1;
    f.layer = i;
    if (!target && is_whiteout(chain.fds[i].get(), name, f.st)) {
        f.whiteout = true;
        return f;
    }
    f.exists = true;
    if (!S_ISDIR(f.st.st_mode)) return f;
    auto opened = open_dir(chain.fds[i].get(), name);
    if (!opened) {  // gone meanwhile (a running session): absent, as the scan treats it
        if (opened.error().code == ENOENT) return Found{};
        return opened.error();
    }
    base::Fd top = std::move(opened.value());
    bool stop = !target && is_opaque(top.get());
    f.sub.fds.push_back(std::move(top));
    f.sub.bottom_is_target = target;
    f.cut = stop;
    for (size_t j = i + 1; j < n && !stop; j++) {
        struct stat st;
        if (::fstatat(chain.fds[j].get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
            if (errno != ENOENT) return base::sys_error("reading layer entry " + name);
            continue;
        }
        bool tj = chain.bottom_is_target && j == n - 1;
        if (!S_ISDIR(st.st_mode)) {  // a whiteout or a non-dir: nothing below shows
            f.cut = true;
            break;
        }
        TRY(base::Fd d, open_dir(chain.fds[j].get(), name));
        stop = !tj && is_opaque(d.get());
        f.sub.fds.push_back(std::move(d));
        f.sub.bottom_is_target = tj;
        f.cut = stop;
    }
    return f;
}

base::Result<std::vector<std::string>> union_names(const Chain& chain) {
    std::vector<std::string> out;
    for (const auto& fd : chain.fds) {
        TRY(auto names, base::list_dir(fd.get()));
        for (auto& e : names) out.push_back(std::move(e.name));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace layers

namespace steps {

base::Result<layers::Chain> stack_chain(const std::string& d) {
    layers::Chain c;
    TRY(base::Fd up, base::open_at(AT_FDCWD, d + "/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    c.fds.push_back(std::move(up));
    TRY(int n, count(d));
    TRY(int first, first_layer(d));  // below it: squashed steps, no layers
    for (int i = n; i >= first; i--) {
        TRY(base::Fd l, open_layer(d, i));
        c.fds.push_back(std::move(l));
    }
    return c;
}

namespace {

// The entry at `rel` as `chain` shows it; `dir` then points at the chain of
// its parent dir (`cur` holds it when it is not `chain`).
base::Result<layers::Found> find_in(const layers::Chain& chain, const std::string& rel, layers::Chain* cur,
                                    const layers::Chain** dir, std::string* name) {
    *dir = &chain;
    for (size_t a = 0; a <= rel.size();) {
        size_t b = rel.find('/', a);
        if (b == std::string::npos) b = rel.size();
        *name = rel.substr(a, b - a);
        TRY(layers::Found f, layers::lookup(**dir, *name));
        if (!f.exists || b == rel.size()) return f;
        if (!S_ISDIR(f.st.st_mode)) return layers::Found{};
        *cur = std::move(f.sub);
        *dir = cur;
        a = b + 1;
    }
    return layers::Found{};
}

}  // namespace

base::Result<std::optional<struct stat>> stat_in(const layers::Chain& chain, const std::string& rel) {
    layers::Chain cur;
    const layers::Chain* dir = nullptr;
    std::string name;
    TRY(layers::Found f, find_in(chain, rel, &cur, &dir, &name));
    if (!f.exists) return std::optional<struct stat>();
    return std::optional<struct stat>(f.st);
}

base::Result<base::Fd> open_in(const layers::Chain& chain, const std::string& rel, struct stat* st) {
    layers::Chain cur;
    const layers::Chain* dir = nullptr;
    std::string name;
    TRY(layers::Found f, find_in(chain, rel, &cur, &dir, &name));
    if (!f.exists || !(S_ISREG(f.st.st_mode) || S_ISDIR(f.st.st_mode)))
        return base::error(rel + " is not a file or directory in the session");
    TRY(base::Fd fd, base::open_at(dir->fds[f.layer].get(), name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
    if (::fstat(fd.get(), st) != 0) return base::sys_error("stat " + rel);
    return fd;
}

}  // namespace steps
