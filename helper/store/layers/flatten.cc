// The live upper over every frozen step, flattened into one upper-like dir
// for copying layers (docs/history.md "Capture reads the stack": capture reads the stack in place).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>

#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/layers.h"
#include "helper/store/layers/steps.h"

namespace steps {

namespace {

// Every xattr of `from` onto `to`, except the opaque marker (set by the caller).
base::Result<void> copy_xattrs(int from, int to) {
    std::string names(65536, '\0');
    ssize_t n = ::flistxattr(from, names.data(), names.size());
    if (n < 0) return base::sys_error("listing xattrs");
    for (size_t i = 0; i < static_cast<size_t>(n);) {
        std::string k(names.data() + i);
        i += k.size() + 1;
        if (k == "user.overlay.opaque" || k.rfind("user.", 0) != 0) continue;
        std::string v(65536, '\0');
        ssize_t m = ::fgetxattr(from, k.c_str(), v.data(), v.size());
        if (m < 0) return base::sys_error("reading xattr " + k);
        if (::fsetxattr(to, k.c_str(), v.data(), static_cast<size_t>(m), 0) != 0)
            return base::sys_error("copying xattr " + k);
    }
    return base::Ok();
}

base::Result<void> merge(const layers::Chain& chain, int out) {
    TRY(auto names, layers::union_names(chain));
    for (const auto& name : names) {
        TRY(layers::Found f, layers::lookup(chain, name));
        int from = chain.fds[f.layer].get();
        if (f.whiteout) {
            // A whiteout over something of a lower step, or over the target.
            if (::mknodat(out, name.c_str(), S_IFCHR | 0, makedev(0, 0)) != 0 &&
                ::linkat(from, name.c_str(), out, name.c_str(), 0) != 0)
                return base::sys_error("flattening whiteout " + name);
            continue;
        }
        if (!f.exists) continue;
        if (!S_ISDIR(f.st.st_mode)) {
            if (::linkat(from, name.c_str(), out, name.c_str(), 0) != 0) return base::sys_error("flattening " + name);
            continue;
        }
        if (::mkdirat(out, name.c_str(), 0700) != 0) return base::sys_error("flattening dir " + name);
        TRY(base::Fd sub, base::open_at(out, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
        TRY_VOID(merge(f.sub, sub.get()));
        int top = f.sub.fds[0].get();
        TRY_VOID(copy_xattrs(top, sub.get()));
        // Cut off from the target by a step: opaque, as one upper would be.
        if (f.cut && ::fsetxattr(sub.get(), "user.overlay.opaque", "y", 1, 0) != 0)
            return base::sys_error("marking " + name + " opaque");
        struct timespec ts[2] = {f.st.st_atim, f.st.st_mtim};
        ::futimens(sub.get(), ts);
        if (::fchmod(sub.get(), f.st.st_mode & 07777) != 0) return base::sys_error("flattening dir " + name);
    }
    return base::Ok();
}

}  // namespace

base::Result<std::string> flatten(const std::string& d) {
    TRY(int n, count(d));
    return flatten_range(d, 1, n, true);
}

base::Result<std::string> flatten_range(const std::string& d, int from, int to, bool live) {
    std::string flat = d + "/flat." + std::to_string(::getpid());
    remove_flat(flat);
    layers::Chain chain;
    if (live) {
        TRY(base::Fd up, base::open_at(AT_FDCWD, d + "/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
        chain.fds.push_back(std::move(up));
    }
    TRY(int first, first_layer(d));
    for (int i = to; i >= std::max(from, first); i--) {
        TRY(base::Fd l, open_layer(d, i));
        chain.fds.push_back(std::move(l));
    }
    if (::mkdir(flat.c_str(), 0755) != 0) return base::sys_error("creating " + flat);
    TRY(base::Fd out, base::open_at(AT_FDCWD, flat, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    auto r = merge(chain, out.get());
    if (!r) {
        remove_flat(flat);
        return r.error().context("flattening the session's steps");
    }
    return flat;
}

base::Result<void> merge_layers(const std::vector<std::string>& top_first, const std::string& to) {
    layers::Chain chain;
    for (const auto& from : top_first) {
        TRY(base::Fd src, base::open_at(AT_FDCWD, from, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
        chain.fds.push_back(std::move(src));
    }
    if (::mkdir(to.c_str(), 0755) != 0) return base::sys_error("creating " + to);
    TRY(base::Fd out, base::open_at(AT_FDCWD, to, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    return merge(chain, out.get());
}

base::Result<void> copy_layer(const std::string& from, const std::string& to) { return merge_layers({from}, to); }

void remove_flat(const std::string& flat) {
    auto slash = flat.rfind('/');
    base::Fd parent(::open(flat.substr(0, slash).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (parent.valid()) (void)review::remove_tree_at(parent.get(), flat.substr(slash + 1));
}

}  // namespace steps
