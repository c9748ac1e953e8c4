#include "review/undo/undo.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <optional>

#include "helper/base/fs/beneath.h"
#include "helper/base/interrupt.h"
#include "helper/base/text.h"
#include "helper/store/session/session.h"
#include "review/apply/commit.h"
#include "review/apply/records.h"
#include "review/apply/recover.h"
#include "review/txn/journal.h"
#include "review/txn/txn.h"

namespace review {
namespace {

struct Located {
    std::string target;
    std::string id;
    std::string home;  // STATE/undo/DEV-INO when the record is in the state dir
    std::string key;   // DEV-INO then
    std::string dir;   // the record's dir, resolved (what messages name)
};

base::Result<Located> locate(const std::string& record, const std::string& target, const std::string& state) {
    char buf[PATH_MAX];
    if (!::realpath(record.c_str(), buf))
        return base::sys_error("undo record " + base::display_path(record))
            .context("cannot find it; pass the path apply printed, or use --last / --list");
    std::string p = buf;
    const std::string tail = "/undo.json";
    if (p.size() > tail.size() && p.compare(p.size() - tail.size(), tail.size(), tail) == 0)
        p.resize(p.size() - tail.size());
    auto [parent, id] = split_parent(p);
    auto [grand, undo_dir] = split_parent(parent);
    Located l;
    l.id = id;
    l.dir = p;
    std::string state_undo;
    if (::realpath(state.c_str(), buf)) state_undo = std::string(buf) + "/undo";
    if (valid_token(id) && undo_dir == kUndoDir) {
        l.target = target.empty() ? (grand.empty() ? "/" : grand) : target;
        return l;
    }
    if (valid_token(id) && !state_undo.empty() && grand == state_undo) {
        l.home = parent;
        l.key = undo_dir;
        l.target = target;
        if (l.target.empty()) {
            // The record says which tree it belongs to; undo checks it is that tree.
            TRY(base::Fd dir, base::open_at(AT_FDCWD, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
            TRY(Txn t, read_undo_json(dir.get(), p, id, true));
            l.target = t.target;
        }
        return l;
    }
    return base::error(base::display_path(record) +
                       " is not an undo record (expected STATE/undo/DEV-INO/ID or TARGET/" + kUndoDir +
                       "/ID as apply printed it; 'layover undo --list' lists them)");
}

}  // namespace

bool is_undo_record(const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return false;
    if (S_ISDIR(st.st_mode)) return true;
    return path.size() >= 9 && path.compare(path.size() - 9, 9, "undo.json") == 0;
}

base::Result<ApplyReport> undo_record(const std::string& record, const UndoOptions& opts) {
    ApplyReport rep;
    TRY(std::string state, session::state_dir());
    TRY(Located loc, locate(record, opts.target, state));
    char buf[PATH_MAX];
    if (!::realpath(loc.target.c_str(), buf)) return base::sys_error("target " + base::display_path(loc.target));
    std::string target = buf;
    TRY(base::Fd rootfd, base::open_at(AT_FDCWD, target, O_RDONLY | O_DIRECTORY));
    int root = rootfd.get();
    struct stat rst {};
    if (::fstat(root, &rst) != 0) return base::sys_error("stat target");
    std::string key = target_key(rst.st_dev, rst.st_ino);
    if (!loc.key.empty() && loc.key != key)
        return base::error("undo record " + base::display_path(record) + " belongs to another tree than " +
                           base::display_path(target) + "; undo only works on the tree apply wrote");
    std::string jpath = journal_path(state, key);
    DirCache dirs(root);
    base::Fd lock;
    std::optional<Txn> before;  // the record as it was before the recovery below
    if (!opts.dry_run) {
        TRY(lock, lock_target(state, key, target));
        if (auto pre = open_store(StoreRef{root, loc.home, loc.id}, false); pre.ok())
            if (auto t = read_undo_json(pre->dir.get(), loc.dir, loc.id, !loc.home.empty()); t.ok())
                before = std::move(t).value();
        TRY(rep.recovered, recover(jpath, state, root, dirs));
        dirs.clear();
    }
    auto st = open_store(StoreRef{root, loc.home, loc.id}, false);
    if (!st.ok()) {
        if (!rep.recovered.empty()) {
            // The recovery just finished this very undo (an earlier one failed
            // part way): report its paths, not "restored 0 path(s)".
            if (before && before->id == loc.id) {
                for (const auto& u : before->units) {
                    rep.applied.push_back(u.path);
                    if (u.op == Op::Add) rep.removed.push_back(u.path);
                }
                rep.undone_source = before->source;
                rep.undone_target = before->target;
            }
            return rep;
        }
        return st.error().context("undo record " + base::display_path(record));
    }
    TRY(Txn t, read_undo_json(st->dir.get(), loc.dir, loc.id, !loc.home.empty()));
    // Another tree at the same inode (removed, the inode reused) is another
    // tree too: its record is in no list (attack25), nor run by its path (attack27).
    int64_t born = t.btime_ns ? tree_birth_ns(root) : 0;
    if (t.dev != static_cast<uint64_t>(rst.st_dev) || t.ino != static_cast<uint64_t>(rst.st_ino) ||
        (born && born != t.btime_ns))
        return base::error("undo record " + base::display_path(record) + " belongs to another tree (" +
                           base::display_path(t.target) + "); undo only works on the tree apply wrote");

    CommitCtx ctx{root, dirs, st->dir.get(), st->trash.get()};
    for (const auto& u : t.units) {
        std::string why = check_after(ctx, u);
        if (why.empty()) continue;
        if (opts.force) rep.forced.push_back({u.path, why});
        else rep.conflicts.push_back({u.path, why});
    }
    for (const auto& u : t.units) {
        rep.applied.push_back(u.path);
        if (u.op == Op::Add) rep.removed.push_back(u.path);
    }
    rep.undone_source = t.source;
    rep.undone_target = t.target;
    if (!rep.conflicts.empty()) {
        rep.applied.clear();
        return rep;
    }
    if (opts.dry_run) return rep;

    Txn j = t;
    j.kind = TxnKind::Undo;
    j.state = TxnState::Committing;
    j.record = store_path(state, t);
    j.force = opts.force;
    base::InterruptDeferral hold_signals;  // a Ctrl+C waits for the undo's end (helper/base/interrupt.h)
    TRY_VOID(write_journal(jpath, j));
    // The same steps a recovery of this journal takes, so an undo killed
    // part way is finished exactly as it would have gone on (--force too).
    if (auto r = revert_txn(root, state, dirs, j, j.units.size()); !r.ok())
        return base::error(r.error().message + "; the undo is incomplete: the journal " + jpath +
                           " is kept, so re-running 'layover undo' (after fixing the cause) finishes it");
    TRY_VOID(remove_journal(jpath));
    rep.undo.clear();
    return rep;
}

}  // namespace review
