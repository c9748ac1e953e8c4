#include "review/apply/recover.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "review/apply/commit.h"
#include "review/txn/fault.h"
#include "review/txn/journal.h"

namespace review {

base::Result<Store> open_store(int root, const std::string& id, bool create) {
    Store s;
    if (create && ::mkdirat(root, kUndoDir, 0700) != 0 && errno != EEXIST)
        return base::sys_error(std::string("create ") + kUndoDir);
    auto undo_dir = open_dir_beneath(root, kUndoDir);
    if (!undo_dir.ok()) {
        int err = undo_dir.error().code;
        if (err == ELOOP || err == ENOTDIR)
            return base::Error{std::string(kUndoDir) +
                                   " in the target is not a directory (a symlink or a file), "
                                   "and layover keeps its undo records there; move it away, then retry",
                               err};
        return undo_dir.error();
    }
    s.undo_dir = std::move(undo_dir).value();
    if (create && ::mkdirat(s.undo_dir.get(), id.c_str(), 0700) != 0)
        return base::sys_error(std::string("create ") + kUndoDir + "/" + id);
    TRY(s.dir, base::open_at(s.undo_dir.get(), id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    if (::mkdirat(s.dir.get(), "trash", 0700) != 0 && errno != EEXIST) return base::sys_error("create undo trash");
    TRY(s.trash, base::open_at(s.dir.get(), "trash", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    return s;
}

base::Result<void> remove_store(int root, const std::string& id) {
    auto u = open_dir_beneath(root, kUndoDir);
    if (!u.ok()) {
        // Absent, or not ours (a symlink or file planted there): no store of
        // ours can be behind it, so there is nothing to remove.
        int err = u.error().code;
        if (err == ENOENT || err == ELOOP || err == ENOTDIR) return base::Ok();
        return u.error();
    }
    TRY_VOID(remove_tree_at(u->get(), id));
    ::fsync(u->get());
    if (::unlinkat(root, kUndoDir, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
        return base::sys_error(std::string("remove ") + kUndoDir);
    return base::Ok();
}

base::Result<void> revert_txn(int root, DirCache& dirs, const Txn& t, size_t committed) {
    auto st = open_store(root, t.id, false);
    if (st.ok()) {
        CommitCtx ctx{root, dirs, st->dir.get(), st->trash.get()};
        bool undo = t.kind == TxnKind::Undo;
        for (size_t i = std::min(committed, t.units.size()); i-- > 0;) {
            TRY_VOID(undo ? fault_point("undo", "restore") : fault_point("apply", "revert"));
            if (t.force) TRY_VOID(make_way(ctx, t.units[i]));
            auto r = restore_unit(ctx, t.units[i]);
            if (!r.ok()) return r.error().context(undo ? "undoing" : "rolling back");
        }
        for (const auto& u : t.units) TRY_VOID(discard_staged(ctx, u));
    } else {
        // No store: staging never got that far; only staged names may exist.
        CommitCtx ctx{root, dirs, -1, -1};
        for (const auto& u : t.units) TRY_VOID(discard_staged(ctx, u));
    }
    if (::syncfs(root) != 0) return base::sys_error("syncfs");
    return remove_store(root, t.id);
}

base::Result<std::string> recover(const std::string& journal, int root, DirCache& dirs) {
    TRY(auto jt, read_journal(journal));
    if (!jt) return std::string();
    const Txn& t = *jt;
    std::string note;
    if (t.kind == TxnKind::Apply) {
        bool complete = false;
        if (auto st = open_store(root, t.id, false); st.ok()) {
            struct stat sb {};
            complete = ::fstatat(st->dir.get(), "undo.json", &sb, AT_SYMLINK_NOFOLLOW) == 0;
        }
        if (complete) {
            note = "an interrupted apply of " + base::display_path(t.source) + " had finished; its undo record is " +
                   base::display_path(t.target) + "/" + t.store;
        } else {
            size_t committed = t.state == TxnState::Committing ? t.units.size() : 0;
            TRY_VOID(revert_txn(root, dirs, t, committed));
            note = "reverted an interrupted apply of " + base::display_path(t.source) + " (started " + t.created +
                   "); the target is as it was before it";
        }
    } else {
        // An interrupted undo is finished: restoring is idempotent.
        TRY_VOID(revert_txn(root, dirs, t, t.units.size()));
        note = "finished an interrupted undo of " + base::display_path(t.record);
    }
    TRY_VOID(remove_journal(journal));
    return note;
}

}  // namespace review
