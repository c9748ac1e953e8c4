// The paths one frozen step touched, against the view just below it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/layers.h"
#include "helper/store/layers/steps.h"

namespace steps {

namespace {

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "/" + b; }

base::Result<base::Fd> open_dir(int dirfd, const std::string& name) {
    return base::open_at(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

// User xattrs except overlayfs's own markers (user.overlay.*); the user's
// own user.overlay.X, which a layer stores escaped as user.overlay.overlay.X,
// counts. The whole list (XATTR_LIST_MAX): one past a 4 KiB buffer read as
// none (possible on filesystems that hold more than ext4's one block).
std::vector<std::pair<std::string, std::string>> user_xattrs(int fd) {
    std::vector<std::pair<std::string, std::string>> out;
    std::string names(65536, '\0');  // XATTR_LIST_MAX
    ssize_t n = ::flistxattr(fd, names.data(), names.size());
    if (n <= 0) return out;
    for (size_t i = 0; i < static_cast<size_t>(n);) {
        std::string k(names.data() + i);
        i += k.size() + 1;
        bool escaped = k.rfind("user.overlay.overlay.", 0) == 0;
        if (k.rfind("user.", 0) != 0 || (k.rfind("user.overlay.", 0) == 0 && !escaped)) continue;
        std::string v(65536, '\0');
        ssize_t m = ::fgetxattr(fd, k.c_str(), v.data(), v.size());
        v.resize(m < 0 ? 0 : static_cast<size_t>(m));
        out.emplace_back(k, v);
    }
    std::sort(out.begin(), out.end());
    return out;
}

bool same_bytes(int a, int b) {
    char x[65536], y[65536];
    for (off_t off = 0;;) {
        ssize_t n = ::pread(a, x, sizeof x, off), m = ::pread(b, y, sizeof y, off);
        if (n != m || n < 0) return false;
        if (n == 0) return true;
        if (std::memcmp(x, y, static_cast<size_t>(n)) != 0) return false;
        off += n;
    }
}

std::string link_of(int dirfd, const std::string& name) {
    char b[4096];
    ssize_t n = ::readlinkat(dirfd, name.c_str(), b, sizeof b);
    return n < 0 ? std::string() : std::string(b, static_cast<size_t>(n));
}

struct Walk {
    std::vector<Touched>* out;

    base::Result<void> all_added(int dirfd, const std::string& prefix) {
        TRY(auto names, base::list_dir(dirfd));
        for (const auto& e : names) {
            std::string path = join(prefix, e.name);
            struct stat st;
            if (::fstatat(dirfd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
            if (layers::is_whiteout(dirfd, e.name, st)) continue;
            out->push_back({path, "A"});
            if (S_ISDIR(st.st_mode)) {
                TRY(base::Fd sub, open_dir(dirfd, e.name));
                TRY_VOID(all_added(sub.get(), path));
            }
        }
        return base::Ok();
    }

    // The names the view below shows in a hidden dir that the layer lacks: deleted.
    base::Result<void> gone(const std::vector<base::DirEntry>& names, const layers::Chain& below,
                            const std::string& prefix) {
        TRY(auto low, layers::union_names(below));
        size_t i = 0;
        for (const auto& n : low) {
            while (i < names.size() && names[i].name < n) i++;
            if (i < names.size() && names[i].name == n) continue;
            TRY(layers::Found b, layers::lookup(below, n));
            if (b.exists) out->push_back({join(prefix, n), "D"});
        }
        return base::Ok();
    }

    // hide: the layer's dir hides the dir below (opaque, or under an opaque
    // one): what only the view below holds there is deleted, the rest
    // compared, as capture compares a dir removed and remade
    // (docs/design.md, "A dir removed and remade").
    base::Result<void> dir(int up, const layers::Chain& below, const std::string& prefix, bool hide = false) {
        TRY(auto names, base::list_dir(up));
        if (hide) TRY_VOID(gone(names, below, prefix));
        for (const auto& e : names) {
            const std::string& name = e.name;
            std::string path = join(prefix, name);
            struct stat u;
            if (::fstatat(up, name.c_str(), &u, AT_SYMLINK_NOFOLLOW) != 0) continue;
            TRY(layers::Found b, layers::lookup(below, name));
            int bfd = b.exists ? below.fds[b.layer].get() : -1;
            if (layers::is_whiteout(up, name, u)) {
                if (b.exists) out->push_back({path, "D"});
                continue;
            }
            if (!b.exists) {
                out->push_back({path, "A"});
                if (S_ISDIR(u.st_mode)) {
                    TRY(base::Fd sub, open_dir(up, name));
                    TRY_VOID(all_added(sub.get(), path));
                }
                continue;
            }
            if ((u.st_mode & S_IFMT) != (b.st.st_mode & S_IFMT)) {
                out->push_back({path, "T"});
                if (S_ISDIR(u.st_mode)) {
                    TRY(base::Fd sub, open_dir(up, name));
                    TRY_VOID(all_added(sub.get(), path));
                }
                continue;
            }
            bool meta = (u.st_mode & 07777) != (b.st.st_mode & 07777);
            if (S_ISDIR(u.st_mode)) {
                TRY(base::Fd sub, open_dir(up, name));
                if (meta || user_xattrs(sub.get()) != user_xattrs(b.sub.fds[0].get())) out->push_back({path, "mode"});
                TRY_VOID(dir(sub.get(), b.sub, path, hide || layers::is_opaque(sub.get())));
                continue;
            }
            if (S_ISLNK(u.st_mode)) {
                if (link_of(up, name) != link_of(bfd, name)) out->push_back({path, "M"});
                continue;
            }
            if (S_ISREG(u.st_mode)) {
                auto uf = base::open_at(up, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
                auto bf = base::open_at(bfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
                if (!uf || !bf || u.st_size != b.st.st_size || !same_bytes(uf->get(), bf->get())) {
                    out->push_back({path, "M"});
                    continue;
                }
                if (meta || user_xattrs(uf->get()) != user_xattrs(bf->get())) out->push_back({path, "mode"});
                continue;
            }
            if (meta) out->push_back({path, "mode"});
        }
        return base::Ok();
    }
};

}  // namespace

base::Result<std::vector<Touched>> touched(const std::string& d, int n, const std::string& target) {
    TRY(std::string layer, layer_path(d, n));
    return touched_layer(layer, d, n - 1, target);
}

base::Result<std::vector<Touched>> touched_layer(const std::string& layer, const std::string& d, int n,
                                                 const std::string& target) {
    TRY(base::Fd up, open_dir(AT_FDCWD, layer));
    layers::Chain below;
    TRY(int first, first_layer(d));
    for (int i = n; i >= first; i--) {
        TRY(base::Fd l, open_layer(d, i));
        below.fds.push_back(std::move(l));
    }
    TRY(base::Fd t, open_dir(AT_FDCWD, target));
    below.fds.push_back(std::move(t));
    below.bottom_is_target = true;
    std::vector<Touched> out;
    Walk w{&out};
    TRY_VOID(w.dir(up.get(), below, ""));
    std::sort(out.begin(), out.end(), [](const Touched& a, const Touched& b) { return a.path < b.path; });
    return out;
}

base::Result<int> settle(const std::string& d, const std::string& target) {
    TRY(auto recs, read_all(d));
    int done = 0;
    for (auto& r : recs) {
        if (!r.pending || r.missing) continue;
        // An empty layer is a freeze cut short before its exchange (a freeze
        // never makes an empty step): left pending, so the next freeze
        // still knows to reuse it (steps::freeze_live).
        if (auto layer = open_layer(d, r.n))
            if (auto names = base::list_dir(layer->get()); names && names->empty()) continue;
        auto paths = touched(d, r.n, target);
        // Written only if still pending: a concurrent settle (or a squash,
        // which settles first) may have written it meanwhile.
        TRY(base::Fd f, base::open_at(AT_FDCWD, record_file(d, r.n), O_RDONLY | O_NOFOLLOW));
        TRY(std::string text, base::read_all(f.get(), 64u << 20));
        auto now = record_from_text(text);
        if (!now || !now->pending) continue;
        r.pending = false;
        if (paths) r.paths = std::move(paths.value());
        else r.label += " (paths unknown: " + paths.error().message + ")";
        TRY_VOID(write_record(d, r));
        done++;
    }
    return done;
}

}  // namespace steps
