#include "review/apply/recover.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "helper/base/cat.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "review/apply/commit.h"
#include "review/txn/fault.h"
#include "review/txn/journal.h"

namespace review {

namespace {

constexpr const char* kCacheDirTag =
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by layover: its undo records.\n"
    "# For information about cache directory tags see https://bford.info/cachedir/\n";

// The marker files that make TARGET/.layover-undo invisible to git and to
// backup tools honouring CACHEDIR.TAG (written once, when it is created).
base::Result<void> mark_hidden(int undo_dir) {
    for (auto [name, text] :
         {std::pair<const char*, const char*>{".gitignore", "*\n"}, {"CACHEDIR.TAG", kCacheDirTag}}) {
        auto fd = base::open_at(undo_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
        if (!fd.ok()) {
            if (fd.error().code == EEXIST) continue;
            return fd.error().context(base::cat({"writing ", kUndoDir, "/", name}));
        }
        TRY_VOID(base::write_all(fd->get(), text, std::strlen(text)));
    }
    return base::Ok();
}

base::Result<base::Fd> open_target_undo_dir(int root, bool create) {
    bool made = create && ::mkdirat(root, kUndoDir, 0700) == 0;
    if (create && !made && errno != EEXIST) return base::sys_error(base::cat({"create ", kUndoDir}));
    auto undo_dir = open_dir_beneath(root, kUndoDir);
    if (!undo_dir.ok()) {
        int err = undo_dir.error().code;
        if (err == ELOOP || err == ENOTDIR)
            return base::Error{base::cat({kUndoDir,
                                          " in the target is not a directory (a symlink or a file), "
                                          "and layover keeps its undo records there; move it away, then retry"}),
                               err};
        return undo_dir.error();
    }
    if (create) TRY_VOID(mark_hidden(undo_dir->get()));
    return undo_dir;
}

base::Result<base::Fd> open_state_undo_dir(const std::string& home, bool create) {
    if (create) {
        std::string parent = split_parent(home).first;
        if (::mkdir(parent.c_str(), 0700) != 0 && errno != EEXIST) return base::sys_error("create " + parent);
        if (::mkdir(home.c_str(), 0700) == 0) {
            // Durable before any original moves into it.
            TRY(base::Fd p, base::open_at(AT_FDCWD, parent, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
            // Its error is the apply's (attack24: ignored, an apply went on and
            // moved originals into a dir whose name might not survive a crash).
            if (::fsync(p.get()) != 0) {
                base::Error e = base::sys_error("fsync " + parent);
                ::rmdir(home.c_str());  // made again, and fsynced, by the retry
                return e;
            }
        } else if (errno != EEXIST) {
            return base::sys_error("create " + home);
        }
    }
    return base::open_at(AT_FDCWD, home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
}

// True when the dir holds nothing but the marker files, which are then removed.
bool only_markers_left(int dirfd) {
    int fd = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return false;
    DIR* d = ::fdopendir(fd);
    if (!d) {
        ::close(fd);
        return false;
    }
    bool only = true;
    while (dirent* e = ::readdir(d)) {
        std::string n = e->d_name;
        if (n != "." && n != ".." && n != ".gitignore" && n != "CACHEDIR.TAG") only = false;
    }
    ::closedir(d);
    if (!only) return false;
    ::unlinkat(dirfd, ".gitignore", 0);
    ::unlinkat(dirfd, "CACHEDIR.TAG", 0);
    return true;
}

}  // namespace

StoreRef store_ref(int root, const std::string& state, const Txn& t) {
    StoreRef r;
    r.root = root;
    r.id = t.id;
    if (t.in_state) r.home = state + "/" + split_parent(store_rel_of(t)).first;
    return r;
}

std::string store_path(const std::string& state, const Txn& t) {
    if (t.in_state) return state + "/" + store_rel_of(t);
    return (t.target == "/" ? "" : t.target) + "/" + store_rel_of(t);
}

bool store_in_state(int root, const std::string& target, const std::string& state) {
    if (const char* e = std::getenv("LAYOVER_UNDO_IN_TARGET"); e && std::string(e) == "1") return false;
    auto inside = [](const std::string& a, const std::string& b) {  // a at or below b
        return a == b || (a.size() > b.size() && a.compare(0, b.size(), b) == 0 && (b == "/" || a[b.size()] == '/'));
    };
    char buf[PATH_MAX];
    if (!::realpath(state.c_str(), buf)) return false;
    std::string real = buf;
    if (inside(real, target) || inside(target, real)) return false;
    struct statx a {
    }, b{};
    if (::statx(root, "", AT_EMPTY_PATH, STATX_MNT_ID, &a) != 0 ||
        ::statx(AT_FDCWD, real.c_str(), AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &b) != 0)
        return false;
    if ((a.stx_mask & STATX_MNT_ID) && (b.stx_mask & STATX_MNT_ID)) return a.stx_mnt_id == b.stx_mnt_id;
    return false;  // an old kernel: no way to tell a bind mount apart, so keep the store beside the target
}

base::Result<Store> open_store(const StoreRef& ref, bool create) {
    Store s;
    if (ref.home.empty()) {
        TRY(s.undo_dir, open_target_undo_dir(ref.root, create));
        s.rel = std::string(kUndoDir) + "/" + ref.id;
    } else {
        TRY(s.undo_dir, open_state_undo_dir(ref.home, create));
    }
    if (create && ::mkdirat(s.undo_dir.get(), ref.id.c_str(), 0700) != 0)
        return base::sys_error("create the undo store " + ref.id);
    TRY(s.dir, base::open_at(s.undo_dir.get(), ref.id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    if (::mkdirat(s.dir.get(), "trash", 0700) != 0 && errno != EEXIST) return base::sys_error("create undo trash");
    TRY(s.trash, base::open_at(s.dir.get(), "trash", O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
    return s;
}

void note_store(Durability& dur, const Store& s) {
    if (!s.rel.empty()) dur.dir(s.rel);
    else dur.keep(s.dir.get());
}

namespace {

// A store stops being a record before its originals go (attack24: a gc
// killed part way left a record listed whole, and its undo then said
// "restored 100 path(s)" with most of the originals gone, taken for
// restored already). In the state dir it moves into STATE/deleting/ (the
// next gc sweeps what a kill leaves there); elsewhere, or if that rename
// fails, its undo.json goes first (a record without it is refused, and
// listed as one to remove).
base::Result<void> unmake_record(int parent, const std::string& id, const std::string& home) {
    if (!home.empty()) {
        std::string deleting = home.substr(0, home.rfind("/undo/")) + "/deleting";  // helper/sandbox/prepare/discard.h
        std::string aside = "undo." + id + "." + std::to_string(::getpid());
        if (::mkdir(deleting.c_str(), 0700) == 0 || errno == EEXIST)
            if (auto d = base::open_at(AT_FDCWD, deleting, O_RDONLY | O_DIRECTORY | O_NOFOLLOW); d.ok())
                if (::renameat2(parent, id.c_str(), d->get(), aside.c_str(), RENAME_NOREPLACE) == 0) {
                    ::fsync(parent);  // best effort, as the removal's below: the record is gone either way
                    return remove_tree_at(d->get(), aside);
                }
    }
    auto st = base::open_at(parent, id, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!st.ok()) return st.error().code == ENOENT ? base::Ok() : st.error();
    if (::unlinkat(st->get(), "undo.json", 0) != 0 && errno != ENOENT)
        return base::sys_error("remove the undo record " + id + "'s undo.json");
    if (::fsync(st->get()) != 0) return base::sys_error("fsync the undo record " + id);
    return remove_tree_at(parent, id);
}

}  // namespace

base::Result<void> remove_store(const StoreRef& ref) {
    if (!ref.home.empty()) {
        auto u = base::open_at(AT_FDCWD, ref.home, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
        if (!u.ok()) return u.error().code == ENOENT ? base::Ok() : u.error();
        TRY_VOID(unmake_record(u->get(), ref.id, ref.home));
        ::fsync(u->get());
        if (::rmdir(ref.home.c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST && errno != ENOENT)
            return base::sys_error("remove " + ref.home);
        return base::Ok();
    }
    auto u = open_dir_beneath(ref.root, kUndoDir);
    if (!u.ok()) {
        // Absent, or not ours (a symlink or file planted there): no store of
        // ours can be behind it, so there is nothing to remove.
        int err = u.error().code;
        if (err == ENOENT || err == ELOOP || err == ENOTDIR) return base::Ok();
        return u.error();
    }
    TRY_VOID(unmake_record(u->get(), ref.id, ""));
    ::fsync(u->get());
    // Nothing but our markers left: the directory goes too.
    if (only_markers_left(u->get()))
        if (::unlinkat(ref.root, kUndoDir, AT_REMOVEDIR) != 0 && errno != ENOTEMPTY && errno != EEXIST &&
            errno != ENOENT)
            return base::sys_error(base::cat({"remove ", kUndoDir}));
    return base::Ok();
}

base::Result<void> revert_txn(int root, const std::string& state, DirCache& dirs, const Txn& t, size_t committed,
                              const DirCache* staged) {
    StoreRef ref = store_ref(root, state, t);
    auto st = open_store(ref, false);
    if (st.ok()) {
        bool undo = t.kind == TxnKind::Undo;
        CommitCtx ctx{root, dirs, st->dir.get(), st->trash.get(), staged, undo};
        for (size_t i = std::min(committed, t.units.size()); i-- > 0;) {
            TRY_VOID(undo ? fault_point("undo", "restore") : fault_point("apply", "revert"));
            if (t.force) TRY_VOID(make_way(ctx, t.units[i]));
            auto r = restore_unit(ctx, t.units[i]);
            if (!r.ok()) return r.error().context(undo ? "undoing" : "rolling back");
        }
        for (const auto& u : t.units) TRY_VOID(discard_staged(ctx, u));
    } else {
        // No store: staging never got that far; only staged names may exist.
        CommitCtx ctx{root, dirs, -1, -1, staged};
        for (const auto& u : t.units) TRY_VOID(discard_staged(ctx, u));
    }
    if (::syncfs(root) != 0) return base::sys_error("syncfs");
    return remove_store(ref);
}

bool journal_is_of(const Txn& t, int root) {
    if (t.btime_ns == 0) return true;  // an older journal, or a filesystem without birth times
    int64_t now = tree_birth_ns(root);
    return now == 0 || now == t.btime_ns;
}

base::Result<std::string> recover(const std::string& journal, const std::string& state, int root, DirCache& dirs) {
    TRY(auto jt, read_journal(journal));
    if (!jt) return std::string();
    const Txn& t = *jt;
    std::string note;
    // The journal of a tree removed since, whose inode this one reuses
    // (attack25): never run here. Set aside, named, for the user to read.
    if (!journal_is_of(t, root)) {
        std::string aside = journal + ".other-tree-" + t.id;
        if (::rename(journal.c_str(), aside.c_str()) != 0) return base::sys_error("setting aside " + journal);
        return "the journal of an interrupted " + std::string(t.kind == TxnKind::Apply ? "apply" : "undo") + " on " +
               base::display_path(t.target) + " (started " + t.created +
               ") is of an earlier tree at this inode, removed since: nothing of it was done here; it is kept as " +
               base::display_path(aside);
    }
    if (t.kind == TxnKind::Apply) {
        bool complete = false;
        if (auto st = open_store(store_ref(root, state, t), false); st.ok()) {
            struct stat sb {};
            complete = ::fstatat(st->dir.get(), "undo.json", &sb, AT_SYMLINK_NOFOLLOW) == 0;
        }
        if (complete) {
            note = "an interrupted apply of " + base::display_path(t.source) + " had finished; its undo record is " +
                   base::display_path(store_path(state, t));
        } else {
            size_t committed = t.state == TxnState::Committing ? t.units.size() : 0;
            TRY_VOID(revert_txn(root, state, dirs, t, committed));
            note = "reverted an interrupted apply of " + base::display_path(t.source) + " (started " + t.created +
                   "); the target is as it was before it";
        }
    } else {
        // An interrupted undo is finished: restoring is idempotent.
        TRY_VOID(revert_txn(root, state, dirs, t, t.units.size()));
        note = "finished an interrupted undo of " + base::display_path(t.record);
    }
    TRY_VOID(remove_journal(journal));
    return note;
}

}  // namespace review
