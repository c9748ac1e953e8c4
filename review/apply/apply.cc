// The apply engine: plan, check, stage, journal, commit, record undo.
#include "review/apply/apply.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>
#include <system_error>
#include <thread>

#include "helper/base/fs/beneath.h"
#include "helper/base/interrupt.h"
#include "helper/base/text.h"
#include "helper/store/records/undo_trees.h"
#include "helper/store/session/session.h"
#include "review/apply/already.h"
#include "review/apply/commit.h"
#include "review/apply/merge.h"
#include "review/apply/observe.h"
#include "review/apply/partial.h"
#include "review/apply/plan.h"
#include "review/apply/progress.h"
#include "review/apply/recover.h"
#include "review/apply/space.h"
#include "review/apply/stage.h"
#include "review/apply/target.h"
#include "review/apply/undo_record.h"
#include "review/txn/durable.h"
#include "review/txn/fault.h"
#include "review/txn/journal.h"

namespace review {
namespace {

// Decide each unit's operation from what is on the target now (equal to the
// base record unless --force overrode a conflict); drop no-ops.
void choose_ops(std::vector<PlanItem>& items, const std::string& id) {
    std::vector<PlanItem> kept;
    size_t seq = 0;
    for (auto& it : items) {
        Unit& u = it.unit;
        bool exists = it.before.exists;
        if (it.deletes || it.meta_only) {
            if (!exists) continue;  // already gone (forced)
            u.op = it.deletes ? Op::Delete : Op::Meta;
        } else if (!exists) {
            u.op = Op::Add;
        } else if (it.before.type == capture::Type::File && it.before_nlink > 1 &&
                   it.member->kind == capture::Member::Kind::File) {
            u.op = Op::InPlace;  // other hard links must keep seeing the file
        } else {
            u.op = Op::Replace;
        }
        seq++;
        if (exists) u.old_ino = it.before.ino;
        if (u.op == Op::Replace || u.op == Op::Delete || u.op == Op::InPlace) u.slot = std::to_string(seq);
        if (it.member) {
            auto parent = split_parent(u.path).first;
            std::string name = std::string(kTmpPrefix) + id + "." + std::to_string(seq);
            u.tmp = parent.empty() ? name : parent + "/" + name;
        }
        kept.push_back(std::move(it));
    }
    items = std::move(kept);
}

std::vector<std::string> applied_paths(const std::vector<PlanItem>& items) {
    std::vector<std::string> out;
    for (const auto& it : items) {
        out.push_back(it.unit.path);
        for (const auto* m : it.tree) out.push_back(m->path);
    }
    return out;
}

// The undo patch must not land in the tree it undoes: the undo would then
// not give the tree back as it was (and a deleted dir could hold it).
base::Result<void> outside_target(const std::string& file, const std::string& target) {
    auto slash = file.rfind('/');
    std::string dir = slash == std::string::npos ? "." : slash == 0 ? "/" : file.substr(0, slash);
    char buf[PATH_MAX];
    if (!::realpath(dir.c_str(), buf))
        return base::error("--undo-to " + base::display_path(file) + ": cannot resolve its directory (" +
                           std::strerror(errno) + "); pass a file in an existing directory; nothing was applied");
    std::string real = buf;
    if (real == target || (real.size() > target.size() && real.compare(0, target.size(), target) == 0 &&
                           (target == "/" || real[target.size()] == '/')))
        return base::error("--undo-to " + base::display_path(file) + " lies inside the target " +
                           base::display_path(target) + "; write it outside the tree it undoes; nothing was applied");
    return base::Ok();
}

// A second thread for deferred hashing, always joined before the work it
// reads from goes away.
class Background {
public:
    explicit Background(std::vector<DeferredHash>& jobs) {
        if (jobs.empty()) return;
        try {
            t_ = std::thread([&jobs] { hash_deferred(jobs); });
        } catch (const std::system_error&) {
            hash_deferred(jobs);  // no thread to be had: hash here instead
        }
    }
    Background(const Background&) = delete;
    Background& operator=(const Background&) = delete;
    ~Background() { join(); }
    void join() {
        if (t_.joinable()) t_.join();
    }

private:
    std::thread t_;
};

// The entries of each staged directory tree, as staging recorded them
// (PlanItem::staged_tree), or else walked on a second thread while the
// staged data is flushed and the journal written (the commit renames only a
// tree's root, which is recorded apart): undo's record of them is then
// ready when the commit ends. Not walked when the patch has hard links:
// linking or renaming a file changes its ctime, which may be seen in a tree
// walked before. Joined before the commit renames anything.
class TreeWalks {
public:
    TreeWalks(int root, const std::vector<PlanItem>& items) : items_(items) {
        auto link = [](const capture::Member* m) { return m && m->kind == capture::Member::Kind::Hardlink; };
        for (const auto& it : items) {
            if (link(it.member)) return;
            for (const auto* m : it.tree)
                if (link(m)) return;
        }
        for (size_t i = 0; i < items.size(); i++) {
            const auto& it = items[i];
            if ((it.unit.op == Op::Add || it.unit.op == Op::Replace) && it.member &&
                it.member->kind == capture::Member::Kind::Dir && !it.staged_tree)
                jobs_.push_back({i, it.unit.tmp, {}, false});
        }
        if (jobs_.empty()) return;
        try {
            t_ = std::thread([this, root] {
                for (auto& j : jobs_) {
                    auto r = walk_tree(root, j.rel);
                    if (!r.ok()) return;  // walked again after the commit, where errors are reported
                    j.tree = std::move(r.value());
                    j.ok = true;
                }
            });
        } catch (const std::system_error&) {
            jobs_.clear();
        }
    }
    TreeWalks(const TreeWalks&) = delete;
    TreeWalks& operator=(const TreeWalks&) = delete;
    ~TreeWalks() { join(); }
    void join() {
        if (t_.joinable()) t_.join();
    }
    // The tree of items[i], or nullptr when it was neither recorded nor walked.
    const std::vector<EntryStat>* tree(size_t i) const {
        if (items_[i].staged_tree) return &*items_[i].staged_tree;
        for (const auto& j : jobs_)
            if (j.item == i && j.ok) return &j.tree;
        return nullptr;
    }

private:
    struct Job {
        size_t item;
        std::string rel;
        std::vector<EntryStat> tree;
        bool ok;
    };
    const std::vector<PlanItem>& items_;
    std::vector<Job> jobs_;
    std::thread t_;
};

bool blocking(const std::vector<PlanItem>& items, bool force) {
    for (const auto& it : items)
        if (!it.conflicts.empty() && (!force || it.hard)) return true;
    return false;
}

void collect(ApplyReport& rep, const std::vector<PlanItem>& items, bool force) {
    rep.forced.clear();
    rep.conflicts.clear();
    for (const auto& it : items)
        for (const auto& c : it.conflicts) {
            if (force && !it.hard) rep.forced.push_back(c);
            else rep.conflicts.push_back({c.path, c.reason, it.hard});
        }
}

// What the commit renames and in-place changes touched, for the fsync after.
void record_commit(Durability& dur, const std::vector<PlanItem>& items, const Store& store) {
    bool noted = false;
    for (const auto& it : items) {
        dur.dir(split_parent(it.unit.path).first);
        if ((it.unit.op == Op::Replace || it.unit.op == Op::Delete) && !noted) {
            note_store(dur, store);
            noted = true;
        }
        if (it.unit.op == Op::Meta) dur.node(it.unit.path);
    }
}

}  // namespace

base::Result<ApplyReport> apply_patch(const capture::Patch& patch, const ApplyOptions& opts) {
    ApplyReport rep;
    PathFilter filter(opts.only, opts.exclude);
    for (const auto& c : patch.manifest().changes) filter.note(c.path);
    TRY(Plan plan, make_plan(patch, filter));
    rep.skipped = plan.skipped;
    TRY(Target tgt, open_target(opts.target, patch));
    int root = tgt.fd.get();
    TRY(std::string state, session::state_dir());
    {
        std::vector<std::string> paths;
        for (const auto& it : plan.items) paths.push_back(it.unit.path);
        char buf[PATH_MAX];
        std::string why = state_dir_problem(tgt.path, ::realpath(state.c_str(), buf) ? buf : "", paths);
        if (!why.empty()) return base::error(why);
    }
    if (opts.as_undo && opts.undo_vouched_only && !opts.dry_run) {
        TRY(bool vouched, undo_patch_vouched(root, state, tgt.dev, tgt.ino, patch));
        if (!vouched)
            return base::error(base::display_path(patch.file()) +
                               " is an undo patch of no apply this tree's undo records know (it may come from "
                               "anywhere, and undo lists and asks nothing): look at it with 'layover show " +
                               base::display_path(patch.file()) +
                               "', then undo again with --yes, or apply it with "
                               "'layover apply' to review it; nothing was restored");
    }
    std::string key = target_key(tgt.dev, tgt.ino);
    std::string jpath = journal_path(state, key);
    base::Fd lock;
    DirCache dirs(root, staging_dir_budget());  // after staging: staging_dirs
    if (!opts.dry_run) {
        TRY(lock, lock_target(state, key, tgt.path));
        TRY(rep.recovered, recover(jpath, state, root, dirs));
        dirs.clear();
    }

    // Big files are hashed for the conflict check in a second thread while
    // staging (invisible until commit) runs; a conflict found there then
    // rolls the staging back and is reported like any other.
    std::vector<DeferredHash> deferred;
    TRY_VOID(observe(root, dirs, patch.manifest(), plan.items, opts.dry_run ? nullptr : &deferred));
    if (!patch.manifest().originals.empty()) {
        hash_deferred(deferred);  // which files moved since the base must be known to merge them
        TRY_VOID(finish_deferred(deferred, plan.items));
        deferred.clear();
    }
    // What the target has as the patch makes it is no conflict (a patch applied twice).
    TRY_VOID(drop_already_applied(root, patch, opts, plan.items, &rep.already));
    if (!patch.manifest().originals.empty()) TRY_VOID(merge_moved(root, patch, opts, plan.items, &rep));
    hunk_conflicts_are_hard(opts.hunks, plan.items);
    if (blocking(plan.items, opts.force)) {
        hash_deferred(deferred);  // list every conflict, not only the cheap ones
        TRY_VOID(finish_deferred(deferred, plan.items));
    }
    collect(rep, plan.items, opts.force);
    if (!rep.conflicts.empty()) return rep;
    if (!opts.hunks.empty()) {
        hash_deferred(deferred);  // the files chosen by hunk are compared with their base now
        TRY_VOID(finish_deferred(deferred, plan.items));
        deferred.clear();
        TRY_VOID(choose_partial(root, patch, opts.hunks, plan.items, &rep.partial));
        std::erase_if(rep.merged, [&](const std::string& p) {  // a merged file whose hunks chosen left it out
            return std::none_of(plan.items.begin(), plan.items.end(),
                                [&](const PlanItem& it) { return it.unit.path == p; });
        });
        collect(rep, plan.items, opts.force);
        if (!rep.conflicts.empty()) return rep;
    }
    std::string id = random_token(6);
    choose_ops(plan.items, id);
    rep.applied = applied_paths(plan.items);
    for (const auto& it : plan.items)
        if (it.unit.op == Op::InPlace) rep.linked.push_back(it.unit.path);
    if (opts.dry_run || plan.items.empty()) {
        if (!opts.dry_run) rep.applied.clear();
        return rep;
    }
    TRY_VOID(check_free_space(root, plan.items));

    std::optional<UndoPatchOut> undo_out;
    if (!opts.undo_to.empty()) {
        TRY_VOID(outside_target(opts.undo_to, tgt.path));
        TRY(auto o, UndoPatchOut::create(opts.undo_to));
        undo_out.emplace(std::move(o));
    }

    Txn txn;
    txn.id = id;
    txn.target = tgt.path;
    txn.dev = tgt.dev;
    txn.ino = tgt.ino;
    txn.btime_ns = tree_birth_ns(root);
    txn.state = TxnState::Staging;
    // A patch file by its real path: `undo --list` shows it, and a later
    // apply of it from another directory finds this record (it kept the
    // path as typed, `p.tar.zst`, which named nothing elsewhere).
    char real[PATH_MAX];
    txn.source = patch.from_session()                     ? patch.manifest().session
                 : ::realpath(patch.file().c_str(), real) ? std::string(real)
                                                          : patch.file();
    txn.created = now_rfc3339();
    struct timespec ts {};
    ::clock_gettime(CLOCK_REALTIME, &ts);
    txn.created_ns = static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    txn.in_state = store_in_state(root, tgt.path, state);
    txn.store = store_rel_of(txn);
    txn.units.resize(plan.items.size());
    // The units as the plan's items have them now (staging and the commit
    // fill in inodes, slots and after-states as they go).
    auto take_units = [&] {
        for (size_t i = 0; i < plan.items.size(); i++) txn.units[i] = plan.items[i].unit;
    };
    take_units();
    // From here the real tree is touched: a Ctrl+C (SIGTERM, SIGHUP) stops
    // staging, which rolls back, or waits for the commit's end; raised again
    // once the tree is whole (helper/base/interrupt.h).
    base::InterruptDeferral hold_signals;
    TRY_VOID(write_journal(jpath, txn));

    Progress progress(opts.progress);
    size_t committed = 0;
    DirCache staging_dirs(root);  // the dirs staging wrote into (dirs' till then), kept for a rollback
    auto fail = [&](const base::Error& e) -> base::Error {
        progress.done();
        take_units();
        auto r = revert_txn(root, state, dirs, txn, committed, &staging_dirs);
        if (!r.ok())
            return base::error(e.message + "; ROLLING BACK FAILED: " + r.error().message + "; the journal " + jpath +
                               " is kept: re-run layover apply or undo on " + base::display_path(tgt.path) +
                               " to finish the rollback");
        (void)remove_journal(jpath);
        return base::Error{e.message + "; nothing was applied", e.code};
    };

    Background hasher(deferred);
    StoreRef sref = store_ref(root, state, txn);
    auto store = open_store(sref, true);
    if (!store.ok()) return fail(store.error().context("creating the undo store"));
    // Listed in the state dir: a later sandbox over a dir above this target
    // hides the store (helper/store/records/undo_trees.h).
    if (!txn.in_state) session::note_tree_store(state, (tgt.path == "/" ? "" : tgt.path) + "/" + kUndoDir);
    // Before commit, durable: every staged entry, the directories holding
    // their names, and the undo store with its parents (created just now).
    Durability dur;
    dur.dir("");
    if (txn.in_state) {
        dur.keep(store->undo_dir.get());
    } else {
        dur.dir(kUndoDir);
    }
    note_store(dur, *store);
    StageCtx sctx{root, dirs, store->dir.get(), patch, progress, dur, store->rel, opts.tap ? &opts.tap : nullptr};
    auto staged = [&] {
        EarlyFlush early(root, dur);
        return stage_all(sctx, plan.items);
    }();
    if (!staged.ok()) return fail(staged.error());
    if (opts.before_commit)
        if (auto r = opts.before_commit(); !r.ok()) return fail(r.error());
    TreeWalks walks(root, plan.items);
    // A rollback removes the staged trees: not while they are being walked.
    auto fail_walked = [&](const base::Error& e) {
        walks.join();
        return fail(e);
    };
    std::swap(dirs, staging_dirs);  // dirs starts afresh; staging's stay open for a rollback
    if (auto r = dur.flush(root, dirs); !r.ok()) return fail_walked(r.error());
    hasher.join();
    if (auto r = finish_deferred(deferred, plan.items); !r.ok()) return fail_walked(r.error());
    collect(rep, plan.items, opts.force);
    if (!rep.conflicts.empty()) {
        walks.join();
        progress.done();
        take_units();
        if (auto r = revert_txn(root, state, dirs, txn, 0, &staging_dirs); !r.ok()) return fail(r.error());
        (void)remove_journal(jpath);
        rep.applied.clear();
        return rep;
    }

    if (auto r = base::stop_if_interrupted(); !r.ok()) return fail_walked(r.error());
    take_units();
    txn.state = TxnState::Committing;
    if (auto r = write_journal(jpath, txn); !r.ok()) return fail_walked(r.error());
    walks.join();

    progress.phase("committing");
    // Directories are resolved beneath the target afresh for the renames:
    // one opened before the flush may have been moved away since.
    dirs.clear();
    CommitCtx cctx{root, dirs, store->dir.get(), store->trash.get()};
    for (size_t i = 0; i < plan.items.size(); i++) {
        if (auto f = fault_point("apply", "commit"); !f.ok()) return fail(f.error());
        committed++;  // a unit that failed halfway is restored too
        if (auto r = commit_unit(cctx, plan.items[i]); !r.ok()) return fail(r.error());
        rebaseline_links(cctx, plan.items, i);
    }
    record_commit(dur, plan.items, *store);
    if (auto r = dur.flush(root, dirs); !r.ok()) return fail(r.error());
    for (size_t i = 0; i < plan.items.size(); i++)
        if (auto r = record_after(cctx, plan.items[i].unit, walks.tree(i)); !r.ok()) return fail(r.error());
    take_units();
    txn.state = TxnState::Done;
    auto recorded = write_file_durably(store->dir.get(), "undo.json", txn_to_json(txn));
    if (recorded.ok()) recorded = fault_point("apply", "recorded");
    if (!recorded.ok()) {
        // It may be in place already (its directory's fsync failed): a
        // recovery would take it to mean the apply finished, so it goes
        // before the rollback starts.
        ::unlinkat(store->dir.get(), "undo.json", 0);
        ::fsync(store->dir.get());
        return fail(recorded.error().context("writing the undo record"));
    }
    TRY_VOID(fault_point("apply", "done"));
    progress.done();
    TRY_VOID(remove_journal(jpath));
    rep.undo = store_path(state, txn);
    if (undo_out) {
        // The tree is already in its new state: a failure here is reported,
        // and the undo record stays the way back.
        if (auto r = undo_out->write(root, store->dir.get(), txn); r.ok()) rep.undo_patch = opts.undo_to;
        else rep.undo_patch_error = r.error().message;
    }
    if (!opts.as_undo) {
        // Best effort: the apply is done; a record that cannot be pruned now is at the next apply or gc.
        if (auto f = enforce_retention(state, root, tgt.path, opts.retention, id); f.ok()) rep.pruned = f.value();
    } else {
        if (remove_store(sref).ok()) rep.undo.clear();
        if (auto r = retire_exported_store(root, state, tgt.dev, tgt.ino, patch); r.ok()) rep.retired = r.value();
    }
    return rep;
}

}  // namespace review
