#include "review/apply/recover_pending.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "helper/base/fd.h"
#include "helper/base/interrupt.h"
#include "review/apply/recover.h"
#include "review/txn/journal.h"

namespace review {

namespace {

// The journal's path for the tree at `target`; "" when it cannot be opened.
std::string journal_of(const std::string& state, const std::string& target, base::Fd* root) {
    auto fd = base::open_at(AT_FDCWD, target, O_RDONLY | O_DIRECTORY);
    struct stat st {};
    if (!fd.ok() || ::fstat(fd->get(), &st) != 0) return "";
    if (root) *root = std::move(fd).value();
    return journal_path(state, target_key(st.st_dev, st.st_ino));
}

}  // namespace

bool journal_pending(const std::string& state, const std::string& target) {
    std::string j = journal_of(state, target, nullptr);
    struct stat st {};
    return !j.empty() && ::stat(j.c_str(), &st) == 0;
}

base::Result<Recovered> recover_pending(const std::string& state, const std::string& target, bool apply_only) {
    Recovered out;
    base::Fd root;
    std::string jpath = journal_of(state, target, &root);
    struct stat st {};
    if (jpath.empty() || ::stat(jpath.c_str(), &st) != 0) return out;
    if (::fstat(root.get(), &st) != 0) return base::sys_error("stat target");
    TRY(base::Fd lock, lock_target(state, target_key(st.st_dev, st.st_ino), target));
    TRY(auto jt, read_journal(jpath));  // under the lock: the apply that held it may have finished
    if (!jt || (apply_only && jt->kind != TxnKind::Apply)) return out;
    bool complete = !journal_is_of(*jt, root.get());  // another tree's: set aside, nothing taken back
    if (jt->kind == TxnKind::Apply && !complete)
        if (auto s = open_store(store_ref(root.get(), state, *jt), false); s.ok())
            complete = ::fstatat(s->dir.get(), "undo.json", &st, AT_SYMLINK_NOFOLLOW) == 0;
    {
        // A Ctrl+C waits for the tree to be whole (the journal goes last, so
        // recovery is idempotent, but a half-reverted tree is not to be seen).
        base::InterruptDeferral hold_signals;
        DirCache dirs(root.get());
        TRY(out.note, recover(jpath, state, root.get(), dirs));
        out.interrupted = base::interrupt_pending();
    }
    out.took_back = !out.note.empty() && !complete;
    return out;
}

}  // namespace review
