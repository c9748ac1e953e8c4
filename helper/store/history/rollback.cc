// Rollback of a kept session and its undo (docs/history.md, "Faults"). Both
// build the new stack beside the old one from layer references and commit it
// with one exchange of steps/ and steps.rb/; SESSION/stack-op says what was
// under way, so that a rerun (or `layover doctor --fix`) finishes or undoes it.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <ctime>

#include "helper/base/dir.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"

namespace steps {

namespace {

bool exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
}

base::Result<void> move(const std::string& from, const std::string& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) return base::sys_error("moving " + from + " to " + to);
    return base::Ok();
}

base::Result<void> remove_dir(const std::string& p) {
    if (!exists(p)) return base::Ok();
    auto slash = p.rfind('/');
    base::Fd parent(::open(p.substr(0, slash).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!parent.valid()) return base::sys_error("opening " + p.substr(0, slash));
    return review::remove_tree_at(parent.get(), p.substr(slash + 1));
}

base::Result<bool> upper_empty(const std::string& d) {
    TRY(base::Fd up, base::open_at(AT_FDCWD, d + "/upper", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    TRY(auto names, base::list_dir(up.get()));
    return names.empty();
}

std::string name4(int n) {
    char b[16];
    std::snprintf(b, sizeof b, "%04d", n);
    return b;
}

std::string op_file(const std::string& d) { return d + "/stack-op"; }
std::string new_stack(const std::string& d) { return d + "/steps.rb"; }

base::Result<void> write_small(const std::string& path, const std::string& text) {
    TRY(base::Fd f, base::open_at(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW, 0600));
    return base::write_all(f.get(), text.data(), text.size());
}

base::Result<std::string> read_small(const std::string& path) {
    TRY(base::Fd f, base::open_at(AT_FDCWD, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
    return base::read_all(f.get(), 64);
}

// steps.rb/ becomes steps/ in one step (the old stack lands in steps.rb/).
// Without RENAME_EXCHANGE (a file system lacking it): two renames, and the
// state between them (no steps/) is finished by finish_pending.
base::Result<void> commit(const std::string& d) {
    std::string a = new_stack(d), b = steps_dir(d);
    if (::renameat2(AT_FDCWD, a.c_str(), AT_FDCWD, b.c_str(), RENAME_EXCHANGE) == 0) return base::Ok();
    if (errno != EINVAL && errno != ENOSYS) return base::sys_error("replacing " + b);
    std::string gone = d + "/steps.gone";
    TRY_VOID(move(b, gone));
    TRY_VOID(move(a, b));
    return move(gone, a);
}

// Share layers 1..n of `container` (view-preserving, one at a time).
base::Result<void> share_all(const std::string& d, const std::string& container, int from, int to) {
    for (int i = from; i <= to; i++) TRY_VOID(share(d, container, i));
    return base::Ok();
}

base::Result<void> copy_refs(const std::string& from, const std::string& to, int first, int last) {
    for (int i = first; i <= last; i++) TRY_VOID(copy_ref(from, to, i));
    return base::Ok();
}

}  // namespace

std::string rolled_back_dir(const std::string& d) { return d + "/rolled-back"; }

base::Result<std::string> finish_pending(const std::string& d) {
    std::string rb_new = rolled_back_dir(d) + ".new";
    if (!exists(op_file(d))) {  // nothing was committed: leftovers of a build go
        bool left = exists(new_stack(d)) || exists(rb_new);
        TRY_VOID(remove_dir(new_stack(d)));
        TRY_VOID(remove_dir(rb_new));
        return std::string(left ? "removed the leftovers of an interrupted rollback" : "");
    }
    TRY(std::string op, read_small(op_file(d)));
    bool undo = op.rfind("undo ", 0) == 0;
    int want = std::atoi(op.c_str() + (undo ? 5 : 9));
    if (!exists(steps_dir(d)) && exists(new_stack(d))) {  // between commit()'s two renames
        TRY_VOID(move(new_stack(d), steps_dir(d)));
        if (exists(d + "/steps.gone")) TRY_VOID(move(d + "/steps.gone", new_stack(d)));
    }
    TRY(int now, count(d));
    std::string what = undo ? "rollback --undo" : "rollback";
    if (now == want) {  // committed: finish
        if (undo) {
            TRY_VOID(remove_dir(rolled_back_dir(d)));
        } else if (exists(rb_new)) {
            TRY_VOID(remove_dir(rolled_back_dir(d)));
            TRY_VOID(move(rb_new, rolled_back_dir(d)));
        }
        TRY_VOID(remove_dir(new_stack(d)));
        ::unlink(op_file(d).c_str());
        return "finished an interrupted " + what;
    }
    TRY_VOID(remove_dir(new_stack(d)));
    if (!undo) TRY_VOID(remove_dir(rb_new));
    ::unlink(op_file(d).c_str());
    return "undid an interrupted " + what + " (it had not taken effect)";
}

base::Result<int> rollback(const std::string& d, int n, const std::string& target) {
    TRY(std::string recovered, finish_pending(d));
    (void)recovered;
    TRY(int total, count(d));
    if (n < 0 || n > total)
        return base::error("no step " + std::to_string(n) + ": the session has " +
                           (total ? "steps 1.." + std::to_string(total) : std::string("no frozen steps")) +
                           " (0 is the real tree alone); see 'layover log'");
    TRY_VOID(check_reachable(d, n));
    TRY(bool empty, upper_empty(d));
    if (n == total && empty) return 0;
    // The live changes become a step first (the view is the same), so that one
    // exchange of steps/ commits the whole rollback.
    if (!empty) {
        char now[32];
        time_t t = ::time(nullptr);
        std::strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
        TRY(int frozen, freeze_live(d, target, now, kMaxSteps));
        if (frozen) total = frozen;
        // Only a dead rename worker's leftover was live, swept: at step n
        // with nothing live, nothing moves, the last rollback's steps kept
        // (they were replaced by none, its --undo lost; attack36).
        else if (n == total) return 0;
    }
    TRY(base::Fd store_lock, lock_store(store_dir(d), false));
    TRY_VOID(share_all(d, steps_dir(d), 1, total));
    std::string rb_new = rolled_back_dir(d) + ".new", stack = new_stack(d);
    TRY_VOID(write_small(op_file(d), "rollback " + std::to_string(n) + "\n"));
    if (::mkdir(rb_new.c_str(), 0700) != 0) return base::sys_error("creating " + rb_new);
    TRY_VOID(write_small(rb_new + "/at", std::to_string(n) + "\n"));
    TRY_VOID(copy_refs(steps_dir(d), rb_new, n + 1, total));
    TRY_VOID(base::fault_point("rollback", "aside"));
    if (::mkdir(stack.c_str(), 0700) != 0) return base::sys_error("creating " + stack);
    TRY_VOID(copy_refs(steps_dir(d), stack, 1, n));
    TRY_VOID(base::fault_point("rollback", "built"));
    TRY_VOID(commit(d));
    TRY_VOID(base::fault_point("rollback", "committed"));
    TRY_VOID(remove_dir(rolled_back_dir(d)));
    TRY_VOID(base::fault_point("rollback", "replaced"));
    TRY_VOID(move(rb_new, rolled_back_dir(d)));
    TRY_VOID(remove_dir(stack));
    ::unlink(op_file(d).c_str());
    return total - n;
}

base::Result<int> rollback_undo(const std::string& d) {
    TRY(std::string recovered, finish_pending(d));
    (void)recovered;
    std::string rb = rolled_back_dir(d);
    if (exists(rb + "/expired")) {
        auto when = read_small(rb + "/expired");
        std::string w = when ? when.value() : "";
        while (!w.empty() && w.back() == '\n') w.pop_back();
        return base::error("the layers the last rollback set aside are gone: gc removed them after 24 hours" +
                           (w.empty() ? std::string() : " (at " + w + ")"));
    }
    if (!exists(rb)) return base::error("nothing to undo: no rollback is kept for this session");
    TRY(std::string at, read_small(rb + "/at"));
    int n = std::atoi(at.c_str());
    TRY(int total, count(d));
    TRY(bool empty, upper_empty(d));
    if (total != n || !empty)
        return base::error("the session changed since the rollback to step " + std::to_string(n) +
                           " (it has steps 1.." + std::to_string(total) + (empty ? "" : " and live changes") +
                           "); roll back to step " + std::to_string(n) + " first, or keep it as it is");
    int top = n;
    while (holds_layer(rb, top + 1)) top++;
    // A rollback made before the store kept the live upper as rolled-back/upper: it comes back as a step.
    if (exists(rb + "/upper")) TRY_VOID(move(rb + "/upper", rb + "/" + name4(++top)));
    if (top == n) return base::error("nothing to undo: the rollback to step " + std::to_string(n) + " kept no layers");
    TRY(base::Fd store_lock, lock_store(store_dir(d), false));
    TRY_VOID(share_all(d, steps_dir(d), 1, n));
    TRY_VOID(share_all(d, rb, n + 1, top));
    std::string stack = new_stack(d);
    TRY_VOID(write_small(op_file(d), "undo " + std::to_string(top) + "\n"));
    if (::mkdir(stack.c_str(), 0700) != 0) return base::sys_error("creating " + stack);
    TRY_VOID(copy_refs(steps_dir(d), stack, 1, n));
    TRY_VOID(copy_refs(rb, stack, n + 1, top));
    TRY_VOID(base::fault_point("undo", "built"));
    TRY_VOID(commit(d));
    TRY_VOID(base::fault_point("undo", "committed"));
    TRY_VOID(remove_dir(rb));
    TRY_VOID(remove_dir(stack));
    ::unlink(op_file(d).c_str());
    return top - n;
}

}  // namespace steps
