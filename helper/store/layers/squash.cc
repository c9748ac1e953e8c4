// The squash past the depth limit (docs/history.md "Depth limit and
// squash"): the oldest two layers of the stack, F and F+1, become one, held
// in F+1's slot; step F's layer goes and its record stays, marked squashed.
// Crash-safe: the merged layer is built aside (SESSION/squash.new), then
//   1. it replaces F+1's layer (the view is the same: it already holds F's
//      content, and F below it adds nothing it does not mask);
//   2. F's record is rewritten with "squashed": the commit point (log,
//      rollback and fork see the step as squashed from here);
//   3. F's layer is retired (a dir to SESSION/squash.old; a reference unlinked).
// A kill between any two leaves the same view; the next squash (or freeze)
// finishes it, and merging F+1 over F again is idempotent.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "helper/base/dir.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"

namespace steps {

namespace {

base::Result<void> remove_aside(const std::string& d, const std::string& name) {
    base::Fd parent(::open(d.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent.valid()) return base::sys_error("opening " + d);
    return review::remove_tree_at(parent.get(), name);
}

// A dir a running session's overlays may still read: into SESSION/retired/
// under a name of its own (the next freeze that is not running removes it).
base::Result<void> keep_aside_dir(const std::string& d, const std::string& name, int f) {
    std::string from = d + "/" + name;
    if (!base::is_real_dir(from)) return base::Ok();
    std::string dir = d + "/retired";
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("creating " + dir);
    char to[64];
    for (int i = 0;; i++) {
        std::snprintf(to, sizeof to, "/%04d-%s-%d", f, name.c_str(), i);
        if (::access((dir + to).c_str(), F_OK) != 0) break;
    }
    if (::rename(from.c_str(), (dir + to).c_str()) != 0) return base::sys_error("moving " + from + " aside");
    return base::Ok();
}

// Step 3: F's layer leaves the stack (its record already says squashed).
base::Result<void> retire(const std::string& d, int f, bool keep_aside) {
    std::string dir = layer_dir(d, f);
    if (base::is_real_dir(dir)) {
        TRY_VOID(remove_aside(d, "squash.old"));
        if (::rename(dir.c_str(), (d + "/squash.old").c_str()) != 0) return base::sys_error("retiring " + dir);
    }
    if (::unlink((dir + ".ref").c_str()) != 0 && errno != ENOENT) return base::sys_error("retiring " + dir + ".ref");
    TRY_VOID(base::fault_point("squash", "retired"));
    if (keep_aside) {
        TRY_VOID(keep_aside_dir(d, "squash.old", f));
        TRY_VOID(keep_aside_dir(d, "squash.new", f));
    }
    TRY_VOID(remove_aside(d, "squash.old"));
    return remove_aside(d, "squash.new");
}

base::Result<bool> record_squashed(const std::string& d, int n) {
    TRY(base::Fd fd, base::open_at(AT_FDCWD, record_file(d, n), O_RDONLY | O_NOFOLLOW));
    TRY(std::string text, base::read_all(fd.get(), 64u << 20));
    TRY(Record r, record_from_text(text));
    return r.squashed;
}

}  // namespace

base::Result<int> first_layer(const std::string& d) {
    // Up to the stack's top only: every run asks, most sessions have no steps
    // (a loop to kMaxSteps cost 100 ms of stat calls per run).
    TRY(int n, count(d));
    return first_layer(d, n);
}

int first_layer(const std::string& d, int n) {
    std::string steps = steps_dir(d);
    for (int i = 1; i <= n; i++)
        if (holds_layer(steps, i)) return i;
    return 1;
}

base::Result<bool> finish_squash(const std::string& d, bool keep_aside) {
    TRY(int f, first_layer(d));
    // A layer whose record says squashed: killed between steps 2 and 3.
    auto marked = record_squashed(d, f);
    if (holds_layer(steps_dir(d), f + 1) && marked && marked.value()) {
        TRY_VOID(retire(d, f, keep_aside));
        return true;
    }
    TRY_VOID(remove_aside(d, "squash.old"));
    TRY_VOID(remove_aside(d, "squash.new"));
    return false;
}

base::Result<void> remove_retired(const std::string& d) { return remove_aside(d, "retired"); }

base::Result<void> squash_oldest(const std::string& d, bool keep_aside) {
    TRY(bool finished, finish_squash(d, keep_aside));
    if (finished) return base::Ok();
    TRY(int f, first_layer(d));
    TRY(int n, count(d));
    if (f >= n) return base::error("no two steps to squash in " + steps_dir(d));
    // The merged layer, aside: F+1 over F, files hard-linked.
    std::string fresh = d + "/squash.new";
    TRY(std::string upper, layer_path(d, f + 1));
    TRY(std::string lower, layer_path(d, f));
    TRY_VOID(merge_layers({upper, lower}, fresh));
    TRY_VOID(base::fault_point("squash", "built"));
    // 1. Into F+1's slot: a real dir wins over a reference, so a shared layer
    // is replaced by a rename and its reference dropped after.
    std::string slot = layer_dir(d, f + 1);
    if (base::is_real_dir(slot)) {
        if (::renameat2(AT_FDCWD, fresh.c_str(), AT_FDCWD, slot.c_str(), RENAME_EXCHANGE) != 0)
            return base::sys_error("replacing " + slot);
    } else {
        if (::rename(fresh.c_str(), slot.c_str()) != 0) return base::sys_error("replacing " + slot);
        if (::unlink((slot + ".ref").c_str()) != 0 && errno != ENOENT)
            return base::sys_error("replacing " + slot + ".ref");
    }
    TRY_VOID(base::fault_point("squash", "swapped"));
    // 2. The commit point: F's record says squashed.
    Record r;  // a step without a readable record keeps none but the mark
    if (auto fd = base::open_at(AT_FDCWD, record_file(d, f), O_RDONLY | O_NOFOLLOW))
        if (auto text = base::read_all(fd->get(), 64u << 20))
            if (auto old = record_from_text(text.value())) r = std::move(old.value());
    r.n = f;
    r.squashed = true;
    TRY_VOID(write_record(d, r));
    TRY_VOID(base::fault_point("squash", "marked"));
    // 3.
    return retire(d, f, keep_aside);
}

base::Result<void> squash_past(const std::string& d, const std::string& target, int top, int max_depth,
                               bool keep_aside) {
    for (bool settled = false;;) {
        TRY(int first, first_layer(d));
        if (top <= 1 || top - first + 1 <= max_depth || first >= top - 1) return base::Ok();
        // The records' paths first: the view below a layer changes.
        if (!settled) TRY_VOID(settle(d, target));
        settled = true;
        TRY_VOID(squash_oldest(d, keep_aside));
    }
}

}  // namespace steps

namespace steps {

base::Result<void> check_reachable(const std::string& d, int n) {
    TRY(int first, first_layer(d));
    if (n <= 0 || n >= first) return base::Ok();
    return base::error("step " + std::to_string(n) + " was squashed into step " + std::to_string(first) +
                       " past the depth limit, so it is out of reach; pick step 0 or " + std::to_string(first) +
                       " or later (see 'layover log')");
}

}  // namespace steps
