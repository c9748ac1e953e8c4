// compare_upper (helper/store/step_view.h): one session over another's view.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/store/layer_build.h"
#include "helper/store/layers.h"
#include "helper/store/step_view.h"
#include "helper/store/steps.h"

namespace steps {

namespace {

base::Result<base::Fd> open_dir(int dirfd, const std::string& name) {
    return base::open_at(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

// a: the other session's flattened dir; x: the one being built (this
// session's flattened upper); t: the real tree's dir there, or -1.
base::Result<void> walk(int a, int x, int t) {
    TRY(auto names, base::list_dir(a));
    for (const auto& e : names) {
        const std::string& name = e.name;
        struct stat sa, sx, st;
        if (::fstatat(a, name.c_str(), &sa, AT_SYMLINK_NOFOLLOW) != 0) continue;
        bool a_dir = S_ISDIR(sa.st_mode) && !layers::is_whiteout(a, name, sa);
        base::Fd a_sub;
        if (a_dir) {
            TRY(base::Fd opened, open_dir(a, name));
            a_sub = std::move(opened);
            if (layers::is_opaque(a_sub.get())) a_dir = false;  // replaced whole: not merged with the tree
        }
        bool t_has = t >= 0 && ::fstatat(t, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
        if (::fstatat(x, name.c_str(), &sx, AT_SYMLINK_NOFOLLOW) == 0) {
            // This session's own entry decides, unless both merely merge a dir.
            if (!a_dir || !S_ISDIR(sx.st_mode) || layers::is_whiteout(x, name, sx)) continue;
            TRY(base::Fd x_sub, open_dir(x, name));
            if (layers::is_opaque(x_sub.get())) continue;
            base::Fd t_sub;
            if (t_has && S_ISDIR(st.st_mode)) {
                TRY(base::Fd opened, open_dir(t, name));
                t_sub = std::move(opened);
            }
            TRY_VOID(walk(a_sub.get(), x_sub.get(), t_sub.valid() ? t_sub.get() : -1));
            continue;
        }
        // Untouched here: this session shows the real tree's state.
        if (!t_has) {
            if (!layers::is_whiteout(a, name, sa)) TRY_VOID(put_whiteout(x, name));
            continue;
        }
        if (a_dir && S_ISDIR(st.st_mode)) {
            TRY(base::Fd t_sub, open_dir(t, name));
            if (::mkdirat(x, name.c_str(), 0700) != 0) return base::sys_error("creating dir " + name);
            TRY(base::Fd x_sub, open_dir(x, name));
            TRY_VOID(walk(a_sub.get(), x_sub.get(), t_sub.get()));
            TRY_VOID(copy_attrs(t_sub.get(), x_sub.get(), st));
            continue;
        }
        layers::Chain real;
        TRY(base::Fd tdup, open_dir(t, "."));
        real.fds.push_back(std::move(tdup));
        real.bottom_is_target = true;
        TRY(layers::Found f, layers::lookup(real, name));
        if (f.exists) TRY_VOID(put_entry(real, f, name, x, true));
    }
    return base::Ok();
}

}  // namespace

base::Result<std::string> compare_upper(const std::string& dir, const std::string& against, const std::string& target) {
    TRY(std::string x, flatten(dir));
    auto done = [&]() -> base::Result<void> {
        TRY(std::string a, flatten(against));
        auto r = [&]() -> base::Result<void> {
            TRY(base::Fd af, open_dir(AT_FDCWD, a));
            TRY(base::Fd xf, open_dir(AT_FDCWD, x));
            TRY(base::Fd tf, open_dir(AT_FDCWD, target));
            return walk(af.get(), xf.get(), tf.get());
        }();
        remove_flat(a);
        return r;
    }();
    if (!done) {
        remove_flat(x);
        return done.error().context("comparing the sessions");
    }
    return x;
}

}  // namespace steps
