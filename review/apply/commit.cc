#include "review/apply/commit.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "review/apply/observe.h"
#include "review/txn/fault.h"

namespace review {
namespace {

// renameat2(RENAME_EXCHANGE), or -1 with EINVAL as on filesystems without it
// (NFS, many FUSE ones); LAYOVER_NO_EXCHANGE=1 makes tests take that path.
int exchange_at(int a, const std::string& an, int b, const std::string& bn) {
    static const bool off = [] {
        const char* e = std::getenv("LAYOVER_NO_EXCHANGE");
        return e && std::string(e) == "1";
    }();
    if (off) {
        errno = EINVAL;
        return -1;
    }
    return renameat2_any_mode(a, an, b, bn, RENAME_EXCHANGE);
}

// "restore PATH", for errors of one step on a unit.
std::string step(const std::string& what, const Unit& u) { return what + " " + base::display_path(u.path); }

base::Error changed(const std::string& path, const std::string& why) {
    return base::error(base::display_path(path) + " " + why + " on the target while applying");
}

// Metadata changes on directories run after their children were renamed
// in, which bumps times: compare identity and mode only.
std::string recheck(const PlanItem& it, const EntryStat& now) {
    if (it.meta_only && it.before.type == capture::Type::Dir) {
        if (!now.exists || now.ino != it.before.ino || now.type != it.before.type) return "was replaced meanwhile";
        if (now.mode != it.before.mode) return "was modified meanwhile";
        return "";
    }
    return same_entry(it.before, now);
}

base::Result<void> write_in_place(CommitCtx& ctx, PlanItem& it, int pfd, const std::string& name) {
    auto [tparent, tname] = split_parent(it.unit.tmp);
    TRY(base::Fd in, base::open_at(pfd, tname, O_RDONLY | O_NOFOLLOW));
    TRY(base::Fd out, base::open_at(pfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK));
    struct stat st {};
    if (::fstat(out.get(), &st) != 0 || st.st_ino != it.unit.old_ino) return changed(it.unit.path, "was replaced");
    TRY_VOID(copy_data(in.get(), out.get()));
    TRY_VOID(set_user_xattrs(out.get(), it.member->xattrs));
    // Special bits the file has and the patch keeps stay; none is added.
    TRY_VOID(set_mode_mtime(out.get(), it.member->mode, it.member->mtime_ns, true, it.member->mode & st.st_mode));
    if (::fsync(out.get()) != 0) return base::sys_error("fsync " + it.unit.path);
    TRY_VOID(out.close());
    (void)ctx;
    if (::unlinkat(pfd, tname.c_str(), 0) != 0) return base::sys_error("remove staged copy");
    return base::Ok();
}

// restoring: the mode is an original's own, special bits included; else
// only special bits the entry has and `mode` keeps are set.
base::Result<void> set_meta(int pfd, const std::string& name, uint64_t ino, uint32_t mode, int64_t mtime_ns,
                            const std::map<std::string, std::string>& xattrs, bool restoring) {
    TRY(base::Fd f, base::open_at(pfd, name, O_PATH | O_NOFOLLOW));
    struct stat st {};
    if (::fstat(f.get(), &st) != 0) return base::sys_error("stat " + name);
    if (st.st_ino != ino) return base::error("was replaced");
    if (S_ISLNK(st.st_mode)) return base::Ok();
    if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) TRY_VOID(set_user_xattrs(f.get(), xattrs));
    uint32_t special = restoring ? mode & 07000 : mode & st.st_mode & 07000;
    if (S_ISDIR(st.st_mode)) {
        // Never widen a dir by dropping its sticky bit; a patch may add it.
        if (!restoring) special |= (mode | st.st_mode) & S_ISVTX;
        if (::chmod(proc_fd_path(f.get()).c_str(), (mode & 0777) | special) != 0)
            return base::sys_error("chmod " + name);
        return base::Ok();
    }
    return set_mode_mtime(f.get(), mode, mtime_ns, true, special);
}

// The directory the unit works in (pfd, from the cache) must still be the
// one its path resolves to beneath the target root now: one moved out of
// the tree (or swapped for another) since is not written into, or, when it
// moved during the unit's renames, the apply stops and rolls back.
base::Result<void> still_in_place(const CommitCtx& ctx, const std::string& parent, int pfd, const std::string& path) {
    struct stat was {
    }, now{};
    auto fresh = open_dir_beneath(ctx.root, parent);
    bool same = fresh.ok() && ::fstat(pfd, &was) == 0 && ::fstat(fresh->get(), &now) == 0 && was.st_dev == now.st_dev &&
                was.st_ino == now.st_ino;
    if (same) return base::Ok();
    return base::error("the directory holding " + base::display_path(path) +
                       " was moved or replaced while applying; stopped so that nothing is written outside the target");
}

base::Result<void> commit_renames(CommitCtx& ctx, PlanItem& it, int pfd, const std::string& name) {
    Unit& u = it.unit;
    TRY(EntryStat now, stat_at(pfd, name));
    std::string why = recheck(it, now);
    if (!why.empty()) return changed(u.path, why);
    if (!it.before_tree.empty() || (now.exists && now.type == capture::Type::Dir && !it.meta_only)) {
        TRY(auto tree, walk_tree(ctx.root, u.path));
        why = same_tree(it.before_tree, tree);
        if (!why.empty()) return changed(u.path, why);
    }
    TRY_VOID(fault_point("apply", "rename"));  // between the re-check and the renames
    std::string tname = split_parent(u.tmp).second;
    // After each rename that takes the path's entry away: was it the
    // original? Something renamed over the path between the re-check and
    // the rename (an editor saving) is put back and the apply stops, so it
    // never ends up in the undo store as if it were the original.
    auto took_original = [&](int fd, const std::string& at, unsigned back) -> base::Result<void> {
        TRY(EntryStat s, stat_at(fd, at));
        if (s.exists && s.ino == u.old_ino) return base::Ok();
        TRY_VOID(rename2(fd, at, pfd, name, back, "put back " + u.path));
        return changed(u.path, "was replaced");
    };
    switch (u.op) {
        case Op::Add: return rename2(pfd, tname, pfd, name, RENAME_NOREPLACE, "install " + u.path);
        case Op::Replace:
            if (exchange_at(pfd, tname, pfd, name) != 0) {
                if (errno != EINVAL) return base::sys_error("replace " + u.path);
                // No RENAME_EXCHANGE here: move the original aside first.
                TRY_VOID(rename2(pfd, name, ctx.store_fd, u.slot, RENAME_NOREPLACE, "move aside " + u.path));
                TRY_VOID(took_original(ctx.store_fd, u.slot, RENAME_NOREPLACE));
                return rename2(pfd, tname, pfd, name, RENAME_NOREPLACE, "install " + u.path);
            }
            TRY_VOID(took_original(pfd, tname, RENAME_EXCHANGE));
            return rename2(pfd, tname, ctx.store_fd, u.slot, RENAME_NOREPLACE, "move aside " + u.path);
        case Op::Delete:
            TRY_VOID(rename2(pfd, name, ctx.store_fd, u.slot, RENAME_NOREPLACE, "delete " + u.path));
            return took_original(ctx.store_fd, u.slot, RENAME_NOREPLACE);
        case Op::InPlace: return write_in_place(ctx, it, pfd, name);
        case Op::Meta: {
            const auto& c = *it.change;
            auto r = set_meta(pfd, name, u.old_ino, c.mode, c.mtime_ns, c.xattrs, false);
            if (!r.ok()) return r.error().context(base::display_path(u.path));
            return base::Ok();
        }
    }
    return base::Ok();
}

}  // namespace

base::Result<void> commit_unit(CommitCtx& ctx, PlanItem& it) {
    Unit& u = it.unit;
    auto [parent, name] = split_parent(u.path);
    TRY(int pfd, ctx.dirs.get(parent));
    TRY_VOID(still_in_place(ctx, parent, pfd, u.path));
    TRY_VOID(commit_renames(ctx, it, pfd, name));
    return still_in_place(ctx, parent, pfd, u.path);
}

void rebaseline_links(CommitCtx& ctx, std::vector<PlanItem>& items, size_t done) {
    const EntryStat& was = items[done].before;
    if (!was.exists || was.type == capture::Type::Dir) return;
    for (size_t j = done + 1; j < items.size(); j++) {
        EntryStat& b = items[j].before;
        if (!b.exists || b.ino != was.ino || b.type != was.type) continue;
        auto [parent, name] = split_parent(items[j].unit.path);
        auto pfd = ctx.dirs.get(parent);
        if (!pfd.ok()) continue;
        auto now = stat_at(*pfd, name);
        if (!now.ok() || !now->exists || now->ino != b.ino) continue;  // the re-check reports it
        std::string path = b.path;
        b = now.value();
        b.path = path;
    }
}

namespace {

// Puts the entry at (from_fd, from), which came from the path, back in
// place of the new entry at the path; the new entry goes to the trash. Each
// step checks it moved what it meant to, so a file saved over the path
// meanwhile is never trashed: it is put back and the restore stops.
base::Result<void> swap_back(CommitCtx& ctx, const Unit& u, int pfd, const std::string& name, int from_fd,
                             const std::string& from) {
    std::string trash = "t" + random_token(8);
    auto where = [&](const std::string& what) { return step(what, u); };
    auto busy = [&] {
        return base::error(base::display_path(u.path) +
                           " was changed while it was being restored; the original is "
                           "kept in the undo store");
    };
    TRY_VOID(fault_point("restore", "swap"));
    if (exchange_at(from_fd, from, pfd, name) == 0) {
        TRY_VOID(fault_point("restore", "swapped"));
        TRY(EntryStat now, stat_at(from_fd, from));
        if (now.exists && now.ino != u.new_ino) {  // swapped with a file saved just now: undo the swap
            TRY_VOID(rename2(from_fd, from, pfd, name, RENAME_EXCHANGE, where("put back")));
            return busy();
        }
        return rename2(from_fd, from, ctx.trash_fd, trash, RENAME_NOREPLACE, where("remove new"));
    }
    if (errno != EINVAL) return base::sys_error(where("restore"));
    // No RENAME_EXCHANGE on this filesystem: the new entry goes first, then
    // the original takes its name.
    TRY_VOID(rename2(pfd, name, ctx.trash_fd, trash, RENAME_NOREPLACE, where("remove new")));
    TRY(EntryStat gone, stat_at(ctx.trash_fd, trash));
    if (gone.exists && gone.ino != u.new_ino) {
        TRY_VOID(rename2(ctx.trash_fd, trash, pfd, name, RENAME_NOREPLACE, where("put back")));
        return busy();
    }
    return rename2(from_fd, from, pfd, name, RENAME_NOREPLACE, where("restore"));
}

// A replaced path: the original is in the slot (moved aside), or at the
// staged name (killed between the commit's exchange and its move aside).
// Whatever is there came from the path, so it goes back even if it is not
// the original (a file saved over the path as the commit ran, then a kill
// before the commit could check). The new entry is known by its inode.
base::Result<void> restore_replaced(CommitCtx& ctx, const Unit& u, int pfd, const std::string& name,
                                    const EntryStat& d) {
    auto where = [&](const std::string& what) { return step(what, u); };
    std::string tname = split_parent(u.tmp).second;
    bool installed = d.exists && d.ino == u.new_ino;
    TRY(EntryStat s, stat_at(ctx.store_fd, u.slot));
    if (s.exists && u.new_ino && s.ino == u.new_ino)  // an earlier restore swapped; killed before the trash
        return rename2(ctx.store_fd, u.slot, ctx.trash_fd, "t" + random_token(8), RENAME_NOREPLACE,
                       where("remove new"));
    int from_fd = ctx.store_fd;
    std::string from = u.slot;
    if (!s.exists) {
        if (tname.empty()) return base::Ok();
        TRY(EntryStat t, stat_at(pfd, tname));
        // The staged name holds the new entry (not committed), or nothing.
        bool from_path = t.exists && (u.new_ino ? t.ino != u.new_ino : t.ino == u.old_ino);
        if (!from_path) return base::Ok();
        from_fd = pfd;
        from = tname;
    }
    if (installed) return swap_back(ctx, u, pfd, name, from_fd, from);
    if (!d.exists) return rename2(from_fd, from, pfd, name, RENAME_NOREPLACE, where("restore"));
    // The path holds something else, made after apply: the original waits
    // in the undo store (moved there from the staged name if need be).
    if (from_fd != ctx.store_fd)
        TRY_VOID(rename2(from_fd, from, ctx.store_fd, u.slot, RENAME_NOREPLACE, where("keep")));
    return base::error(base::display_path(u.path) + " was changed after apply; the original is kept in the undo store");
}

}  // namespace

base::Result<void> make_way(CommitCtx& ctx, const Unit& u) {
    if (u.op == Op::Meta) return base::Ok();
    auto [parent, name] = split_parent(u.path);
    auto pfd = ctx.dirs.get(parent);
    if (!pfd.ok()) return base::Ok();  // restore_unit reports it
    TRY(EntryStat now, stat_at(*pfd, name));
    // What apply left there: the new entry; for a deletion nothing (new_ino
    // is 0); for a file updated in place, that same file.
    uint64_t applied = u.op == Op::InPlace ? u.old_ino : u.new_ino;
    if (!now.exists || now.ino == applied) return base::Ok();
    // The original, back already (a re-run of an interrupted undo).
    if (u.old_ino && now.ino == u.old_ino) return base::Ok();
    if (u.op == Op::InPlace) {
        TRY(EntryStat s, stat_at(ctx.store_fd, u.slot));
        if (s.exists && s.ino == now.ino) return base::Ok();  // its saved copy, linked back already
    }
    return rename2(*pfd, name, ctx.trash_fd, "f" + random_token(8), RENAME_NOREPLACE, step("move aside", u));
}

base::Result<void> restore_unit(CommitCtx& ctx, const Unit& u) {
    auto [parent, name] = split_parent(u.path);
    auto pr = ctx.dirs.get(parent);
    if (!pr.ok()) {
        // An addition whose dir is gone left nothing here. In an apply's
        // rollback, nor did one whose dir is no dir of the target's any more
        // (a symlink or a file now: see discard_staged); an undo stops there
        // instead of saying it removed what it cannot reach.
        int err = pr.error().code;
        bool elsewhere = !ctx.undoing && (err == ELOOP || err == ENOTDIR);
        if (u.op == Op::Add && (err == ENOENT || elsewhere)) return base::Ok();
        // Nor a mode, mtime or xattr change: no data rides on it, and what it
        // was made on went with its dir (attack22: a recovery stopped there,
        // and every later apply and undo with it). An in-place update still
        // stops: the undo store holds the only copy of what the file held.
        if (u.op == Op::Meta && !ctx.undoing && (err == ENOENT || elsewhere)) return base::Ok();
        // A replacement or deletion the commit never made (the undo store
        // holds no original for it) has nothing to put back either.
        if ((u.op == Op::Replace || u.op == Op::Delete) && elsewhere && !u.slot.empty() && ctx.store_fd >= 0) {
            TRY(EntryStat s, stat_at(ctx.store_fd, u.slot));
            if (!s.exists) return base::Ok();
        }
        return pr.error().context("restoring " + base::display_path(u.path));
    }
    int pfd = *pr;
    TRY(EntryStat d, stat_at(pfd, name));
    auto where = [&](const std::string& what) { return step(what, u); };
    switch (u.op) {
        case Op::Add:
            if (d.exists && d.ino == u.new_ino)
                TRY_VOID(rename2(pfd, name, ctx.trash_fd, "t" + random_token(8), RENAME_NOREPLACE, where("remove")));
            return base::Ok();
        case Op::Replace: return restore_replaced(ctx, u, pfd, name, d);
        case Op::Delete: {
            // Anything in the slot came from the path (see Replace).
            TRY(EntryStat s, stat_at(ctx.store_fd, u.slot));
            if (!s.exists) return base::Ok();
            return rename2(ctx.store_fd, u.slot, pfd, name, RENAME_NOREPLACE, where("restore"));
        }
        case Op::InPlace: {
            TRY(EntryStat s, stat_at(ctx.store_fd, u.slot));
            uint64_t ino = u.old_ino;
            if (s.exists && !d.exists) {
                // The path is gone (undo --force moved a later version of it
                // aside): the saved copy itself takes its place, linked, so a
                // re-run finds it there. The file's other hard links keep what
                // apply wrote: they are no longer the same file as the path.
                if (::linkat(ctx.store_fd, u.slot.c_str(), pfd, name.c_str(), 0) != 0)
                    return base::sys_error(where("restore"));
                ino = s.ino;
            } else if (s.exists && d.ino == s.ino) {
                ino = s.ino;  // linked back already
            } else if (s.exists) {
                TRY(base::Fd in, base::open_at(ctx.store_fd, u.slot, O_RDONLY | O_NOFOLLOW));
                TRY(base::Fd out, base::open_at(pfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK));
                struct stat st {};
                if (::fstat(out.get(), &st) != 0 || st.st_ino != u.old_ino)
                    return base::error(base::display_path(u.path) +
                                       " was replaced after apply; the original is kept in the undo store");
                TRY_VOID(copy_data(in.get(), out.get()));
                if (::fsync(out.get()) != 0) return base::sys_error("fsync " + u.path);
            }
            auto r = set_meta(pfd, name, ino, u.old_mode, u.old_mtime_ns, u.old_xattrs, true);
            if (!r.ok()) return r.error().context("restoring " + base::display_path(u.path));
            return base::Ok();
        }
        case Op::Meta: {
            if (!d.exists || d.ino != u.old_ino) return base::Ok();
            auto r = set_meta(pfd, name, u.old_ino, u.old_mode, u.old_mtime_ns, u.old_xattrs, true);
            if (!r.ok()) return r.error().context("restoring " + base::display_path(u.path));
            return base::Ok();
        }
    }
    return base::Ok();
}

base::Result<void> discard_staged(CommitCtx& ctx, const Unit& u) {
    if (u.tmp.empty()) return base::Ok();
    auto [parent, tname] = split_parent(u.tmp);
    // Whether dfd holds the staged entry: once staging recorded its inode,
    // only that is ours to remove.
    auto ours = [&](int dfd) -> base::Result<bool> {
        TRY(EntryStat t, stat_at(dfd, tname));
        if (!t.exists || (u.old_ino && t.ino == u.old_ino)) return false;
        return !u.new_ino || t.ino == u.new_ino;
    };
    auto pr = ctx.dirs.get(parent);
    if (pr.ok()) {
        TRY(bool here, ours(*pr));
        if (here) return remove_tree_at(*pr, tname);
    }
    // The dir staging wrote into, moved out of the target (or swapped for a
    // symlink) since: the staged copy went with it, and is removed there, by
    // the fd staging used and its inode, never by a path outside the target.
    if (int sfd = ctx.staged ? ctx.staged->cached(parent) : -1; sfd >= 0 && (!pr.ok() || sfd != *pr)) {
        TRY(bool there, ours(sfd));
        if (there) return remove_tree_at(sfd, tname);
    }
    if (pr.ok()) return base::Ok();
    // Gone with its directory: nothing left. A dir now a symlink or a file
    // is no dir of the target's any more: whatever was staged in it went
    // where it went, which a rollback never follows a link to reach (a
    // recovery that did not started over and failed at every apply until
    // the link was removed). Any other failure to reach it (out of fds,
    // EACCES, a mount) is reported: the rollback keeps its journal, and a
    // staged copy is never left behind as if it were removed.
    int err = pr.error().code;
    if (err == ENOENT || err == ELOOP || err == ENOTDIR) return base::Ok();
    return pr.error().context("removing the staged copy of " + base::display_path(u.path));
}

base::Result<void> record_after(CommitCtx& ctx, Unit& u, const std::vector<EntryStat>* walked) {
    auto [parent, name] = split_parent(u.path);
    TRY(int pfd, ctx.dirs.get(parent));
    TRY(u.after, stat_at(pfd, name));
    u.after.path = u.path;
    u.after_tree.clear();
    if ((u.op == Op::Add || u.op == Op::Replace) && u.after.type == capture::Type::Dir) {
        if (walked) {
            u.after_tree = *walked;
        } else {
            TRY(u.after_tree, walk_tree(ctx.root, u.path));
        }
    }
    return base::Ok();
}

// same_entry's and same_tree's words, said of what happened since the
// apply: "(was modified)" after "changed since it was applied" said it twice.
static std::string since_applied(const std::string& why) {
    if (why == "was removed meanwhile") return "changed since it was applied (removed)";
    if (why == "appeared meanwhile") return "changed since it was applied (made again: the apply had removed it)";
    if (why == "was replaced meanwhile") return "changed since it was applied (replaced by another entry)";
    if (why == "was modified meanwhile") return "changed since it was applied (edited: its content, mode or times)";
    if (why == "its contents changed meanwhile")
        return "changed since it was applied (entries were added or removed inside it)";
    return "changed since it was applied (" + why.substr(0, why.rfind(" meanwhile")) + ")";
}

std::string check_after(CommitCtx& ctx, const Unit& u) {
    auto [parent, name] = split_parent(u.path);
    auto pr = ctx.dirs.get(parent);
    if (!pr.ok()) return "its directory is gone or unsafe (" + pr.error().message + ")";
    auto now = stat_at(*pr, name);
    if (!now.ok()) return now.error().message;
    EntryStat n = now.value();
    n.path = u.path;
    EntryStat a = u.after;
    // Directories' times move whenever an entry inside changes, which the
    // subtree comparison reports more precisely.
    if (a.type == capture::Type::Dir && n.type == capture::Type::Dir) {
        a.mtime_ns = n.mtime_ns;
        a.ctime_ns = n.ctime_ns;
    }
    std::string why = same_entry(a, n);
    if (!why.empty()) return since_applied(why);
    if (!u.after_tree.empty() || ((u.op == Op::Add || u.op == Op::Replace) && n.type == capture::Type::Dir)) {
        auto tree = walk_tree(ctx.root, u.path);
        if (!tree.ok()) return tree.error().message;
        std::vector<EntryStat> then = u.after_tree, cur = tree.value();
        for (auto* v : {&then, &cur})
            for (auto& e : *v)
                if (e.type == capture::Type::Dir) e.mtime_ns = e.ctime_ns = 0;
        why = same_tree(then, cur);
        if (!why.empty()) return since_applied(why);
    }
    return "";
}

}  // namespace review
