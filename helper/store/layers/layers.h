// A session's layer stack on disk (docs/history.md): frozen steps under the
// live upper, each an overlayfs upper dir. These helpers read a stack the way
// overlayfs does (whiteouts, opaque dirs), fd-relative and without following
// symlinks: the layers' names were made by the sandboxed program.
#pragma once
#include <sys/stat.h>

#include <optional>
#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace layers {

// One directory's layers, topmost first. With a bottom target (the real
// tree), the last fd is read as a plain directory: no whiteouts there.
struct Chain {
    std::vector<base::Fd> fds;
    bool bottom_is_target = false;
};

// `name` as the stack shows it: the topmost layer holding it decides.
struct Found {
    bool exists = false;    // false: no layer holds it, or a whiteout hides it
    bool whiteout = false;  // the topmost holder is a whiteout (exists is false)
    struct stat st {};      // of the topmost holder
    size_t layer = 0;       // its index in the chain
    // A dir: the dirs below it that show through (itself first), and whether
    // the stack stops before the chain's bottom (an opaque dir, a whiteout or
    // a non-dir below it): then it hides all below, like an opaque dir.
    Chain sub;
    bool cut = false;
};

// A whiteout: char 0/0, or a zero-size file marked user.overlay.whiteout.
bool is_whiteout(int dirfd, const std::string& name, const struct stat& st);
// A dir marked user.overlay.opaque=y.
bool is_opaque(int dirfd);

base::Result<Found> lookup(const Chain& chain, const std::string& name);

// The names of every layer of the chain, sorted, once each.
base::Result<std::vector<std::string>> union_names(const Chain& chain);

}  // namespace layers

namespace steps {

// A session's stack as a chain, topmost first: its live upper, then steps
// N..first (helper/store/layers/layer_store.h), without the target.
base::Result<layers::Chain> stack_chain(const std::string& session_dir);
// The entry at relative path `rel` as `chain` shows it, or nullopt where no
// layer shows one (absent, a whiteout, or below a dir the chain cuts off).
base::Result<std::optional<struct stat>> stat_in(const layers::Chain& chain, const std::string& rel);
// The regular file or dir at `rel` as `chain` shows it, opened read-only in
// the topmost layer holding it (never through a symlink); st: its stat there.
base::Result<base::Fd> open_in(const layers::Chain& chain, const std::string& rel, struct stat* st);

}  // namespace steps
