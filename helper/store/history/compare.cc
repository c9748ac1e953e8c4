// compare_upper (helper/store/layers/step_view.h): one session over another's view,
// both read in place through their layers (no flattened copy).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/store/layers/layer_build.h"
#include "helper/store/layers/layers.h"
#include "helper/store/layers/step_view.h"
#include "helper/store/layers/steps.h"

namespace steps {

namespace {

base::Result<base::Fd> open_dir(int dirfd, const std::string& name) {
    return base::open_at(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

// a: the other session's layers there; x: this session's; e: the dir being
// built (what x lacks); t: the real tree's dir there, or -1.
base::Result<void> walk(const layers::Chain& a, const layers::Chain& x, int e, int t) {
    TRY(auto names, layers::union_names(a));
    for (const auto& name : names) {
        TRY(layers::Found fa, layers::lookup(a, name));
        if (!fa.exists && !fa.whiteout) continue;
        // A dir cut off from the tree (opaque, or over a whiteout): replaced
        // whole, not merged with the tree.
        bool a_dir = fa.exists && S_ISDIR(fa.st.st_mode) && !fa.cut;
        struct stat st;
        bool t_has = t >= 0 && ::fstatat(t, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0;
        TRY(layers::Found fx, layers::lookup(x, name));
        base::Fd t_sub;
        if (t_has && S_ISDIR(st.st_mode) && a_dir) {
            TRY(base::Fd opened, open_dir(t, name));
            t_sub = std::move(opened);
        }
        if (fx.exists || fx.whiteout) {
            // This session's own entry decides, unless both merely merge a dir.
            if (!a_dir || !fx.exists || !S_ISDIR(fx.st.st_mode) || fx.cut) continue;
            if (::mkdirat(e, name.c_str(), 0700) != 0) return base::sys_error("creating dir " + name);
            TRY(base::Fd e_sub, open_dir(e, name));
            TRY_VOID(walk(fa.sub, fx.sub, e_sub.get(), t_sub.valid() ? t_sub.get() : -1));
            // Nothing to add there: this session's dir alone (an empty plain
            // dir under it would change nothing, but is not needed).
            (void)::unlinkat(e, name.c_str(), AT_REMOVEDIR);
            continue;
        }
        // Untouched here: this session shows the real tree's state.
        if (!t_has) {
            if (!fa.whiteout) TRY_VOID(put_whiteout(e, name));
            continue;
        }
        if (t_sub.valid()) {
            if (::mkdirat(e, name.c_str(), 0700) != 0) return base::sys_error("creating dir " + name);
            TRY(base::Fd e_sub, open_dir(e, name));
            TRY_VOID(walk(fa.sub, layers::Chain{}, e_sub.get(), t_sub.get()));
            TRY_VOID(copy_attrs(t_sub.get(), e_sub.get(), st));
            continue;
        }
        layers::Chain real;
        TRY(base::Fd tdup, open_dir(t, "."));
        real.fds.push_back(std::move(tdup));
        real.bottom_is_target = true;
        TRY(layers::Found f, layers::lookup(real, name));
        if (f.exists) TRY_VOID(put_entry(real, f, name, e, true));
    }
    return base::Ok();
}

}  // namespace

base::Result<std::string> compare_upper(const std::string& dir, const std::string& against, const std::string& target) {
    TRY(layers::Chain x, stack_chain(dir));
    TRY(layers::Chain a, stack_chain(against));
    std::string e = dir + "/flat." + std::to_string(::getpid());
    remove_flat(e);
    if (::mkdir(e.c_str(), 0755) != 0) return base::sys_error("creating " + e);
    auto done = [&]() -> base::Result<void> {
        TRY(base::Fd ef, open_dir(AT_FDCWD, e));
        TRY(base::Fd tf, open_dir(AT_FDCWD, target));
        return walk(a, x, ef.get(), tf.get());
    }();
    if (!done) {
        remove_flat(e);
        return done.error().context("comparing the sessions");
    }
    return e;
}

}  // namespace steps
