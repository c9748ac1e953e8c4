#include "helper/store/layers/layer_build.h"

#include <fcntl.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>

#include "helper/base/fd.h"

namespace steps {

namespace {

base::Result<void> copy_bytes(int from, int to) {
    char buf[65536];
    for (;;) {
        ssize_t n = ::read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return base::sys_error("reading a file to copy");
        if (n == 0) return base::Ok();
        TRY_VOID(base::write_all(to, buf, static_cast<size_t>(n)));
    }
}

// A non-dir of the real tree, copied.
base::Result<void> copy_from_target(int tdir, const std::string& name, int out, const struct stat& st) {
    if (S_ISREG(st.st_mode)) {
        TRY(base::Fd src, base::open_at(tdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
        TRY(base::Fd dst, base::open_at(out, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
        TRY_VOID(copy_bytes(src.get(), dst.get()));
        TRY_VOID(copy_attrs(src.get(), dst.get(), st));
        return dst.close();
    }
    if (S_ISLNK(st.st_mode)) {
        char b[4096];
        ssize_t n = ::readlinkat(tdir, name.c_str(), b, sizeof b);
        if (n < 0 || static_cast<size_t>(n) >= sizeof b) return base::sys_error("reading symlink " + name);
        if (::symlinkat(std::string(b, static_cast<size_t>(n)).c_str(), out, name.c_str()) != 0)
            return base::sys_error("copying symlink " + name);
        struct timespec ts[2] = {st.st_atim, st.st_mtim};
        ::utimensat(out, name.c_str(), ts, AT_SYMLINK_NOFOLLOW);
        return base::Ok();
    }
    if (S_ISFIFO(st.st_mode)) {
        if (::mkfifoat(out, name.c_str(), st.st_mode & 07777) != 0) return base::sys_error("copying fifo " + name);
        TRY(base::Fd f, base::open_at(out, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW));
        return copy_attrs(f.get(), f.get(), st);
    }
    return base::error("cannot copy " + name + " from the real tree: not a file, symlink, fifo or directory");
}

}  // namespace

base::Result<void> copy_attrs(int from, int to, const struct stat& st, bool from_layer) {
    std::string names(65536, '\0');
    ssize_t n = ::flistxattr(from, names.data(), names.size());
    for (size_t i = 0; n > 0 && i < static_cast<size_t>(n);) {
        std::string k(names.data() + i);
        i += k.size() + 1;
        bool escaped = from_layer && k.rfind("user.overlay.overlay.", 0) == 0;
        if (k.rfind("user.", 0) != 0 || (k.rfind("user.overlay.", 0) == 0 && !escaped)) continue;
        std::string v(65536, '\0');
        ssize_t m = ::fgetxattr(from, k.c_str(), v.data(), v.size());
        if (m < 0) return base::sys_error("reading xattr " + k);
        if (from != to && ::fsetxattr(to, k.c_str(), v.data(), static_cast<size_t>(m), 0) != 0)
            return base::sys_error("copying xattr " + k);
    }
    if (::fchmod(to, st.st_mode & 07777) != 0) return base::sys_error("setting a mode");
    struct timespec ts[2] = {st.st_atim, st.st_mtim};
    ::futimens(to, ts);
    return base::Ok();
}

base::Result<void> put_whiteout(int out, const std::string& name) {
    if (::mknodat(out, name.c_str(), S_IFCHR | 0, makedev(0, 0)) == 0) return base::Ok();
    // Where an unprivileged char 0/0 is refused: overlayfs's xattr whiteout.
    TRY(base::Fd f, base::open_at(out, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
    if (::fsetxattr(f.get(), "user.overlay.whiteout", "", 0, 0) != 0) return base::sys_error("making whiteout " + name);
    return base::Ok();
}

base::Result<void> put_entry(const layers::Chain& chain, const layers::Found& f, const std::string& name, int out,
                             bool opaque) {
    int from = chain.fds[f.layer].get();
    bool target = chain.bottom_is_target && f.layer == chain.fds.size() - 1;
    if (!S_ISDIR(f.st.st_mode)) {
        if (target) return copy_from_target(from, name, out, f.st);
        if (::linkat(from, name.c_str(), out, name.c_str(), 0) != 0) return base::sys_error("linking " + name);
        return base::Ok();
    }
    if (::mkdirat(out, name.c_str(), 0700) != 0) return base::sys_error("creating dir " + name);
    TRY(base::Fd sub, base::open_at(out, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    TRY(auto names, layers::union_names(f.sub));
    for (const auto& n : names) {
        TRY(layers::Found g, layers::lookup(f.sub, n));
        if (g.exists) TRY_VOID(put_entry(f.sub, g, n, sub.get(), false));
    }
    if (opaque && ::fsetxattr(sub.get(), "user.overlay.opaque", "y", 1, 0) != 0)
        return base::sys_error("marking " + name + " opaque");
    return copy_attrs(f.sub.fds[0].get(), sub.get(), f.st);
}

}  // namespace steps
