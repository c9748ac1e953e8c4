#include "review/apply/stage.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string_view>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "helper/base/defer.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/interrupt.h"
#include "helper/base/text.h"
#include "review/apply/handoff.h"
#include "review/apply/stage_file.h"
#include "review/txn/fault.h"

namespace review {

using capture::Member;

base::Result<std::pair<int, std::string>> at_beneath(DirCache& dirs, const std::string& rel) {
    auto [parent, name] = split_parent(rel);
    TRY(int fd, dirs.get(parent));
    return std::make_pair(fd, name);
}

namespace {

using namespace staging;  // the file writer (stage_file.h)

class Stager {
public:
    explicit Stager(StageCtx& c) : ctx_(c) {}

    base::Result<void> run(std::vector<PlanItem>& items) {
        uint64_t total = 0, count = 0;
        for (auto& it : items) {
            if (it.member) add_target(it, it.member, true, total, count);
            for (auto* m : it.tree) add_target(it, m, false, total, count);
        }
        staged_.reserve(order_.size());
        for (auto& t : order_) {
            staged_[t.m->path] = &t.staged;
            if (t.m->kind == Member::Kind::File && !(t.root && t.item->content)) files_[t.m->path] = &t;
        }
        ctx_.progress.set_total(total, count);
        // 1. Directories (parents first), symlinks and fifos.
        for (auto& t : order_) {
            if (t.m->kind == Member::Kind::File || t.m->kind == Member::Kind::Hardlink) continue;
            TRY_VOID(guard(t, make_node(t)));
        }
        // 2. File data, streamed in archive order.
        TRY_VOID(stage_data());
        // Files the data pass did not visit are empty.
        FileOut out(ctx_.root);
        for (auto& t : order_) {
            if (t.m->kind != Member::Kind::File || t.done) continue;
            const auto& content = t.root ? t.item->content : nullptr;
            if (t.m->size != 0 && !content)
                return base::error("patch has no data for " + base::display_path(t.m->path));
            TRY_VOID(guard(t, open_file(out, t)));
            if (content) TRY_VOID(write_chunk(ctx_, out, 0, content->data(), content->size()));
            TRY_VOID(finish_file(ctx_, out));
        }
        // 3. Hard links within the patch, then directory attributes deepest first.
        for (auto& t : order_)
            if (t.m->kind == Member::Kind::Hardlink) TRY_VOID(guard(t, make_link(t)));
        for (auto t = order_.rbegin(); t != order_.rend(); ++t)
            if (t->m->kind == Member::Kind::Dir) TRY_VOID(guard(*t, dir_attrs(*t)));
        for (auto& it : items) TRY_VOID(save_old(it));
        for (auto& t : order_)
            if (t.root) {
                TRY(auto at, at_beneath(ctx_.dirs, t.staged));
                TRY(EntryStat s, stat_at(at.first, at.second));
                t.item->unit.new_ino = s.ino;
            }
        record_trees();
        return base::Ok();
    }

private:
    // Each new directory tree's entries as staged, in walk_tree's form
    // (paths relative to the tree, sorted), so the undo record needs no walk
    // of the staged tree after staging. Nothing is recorded when the patch
    // has hard links (a link moves its target's ctime after it was
    // finished) or a tree holds a dir its owner may not list and search (the
    // walk at undo records such a dir without its entries).
    void record_trees() {
        for (const auto& t : order_)
            if (t.m->kind == Member::Kind::Hardlink) return;
        for (size_t i = 0; i < order_.size();) {
            PlanItem& it = *order_[i].item;
            size_t end = i + 1;
            while (end < order_.size() && order_[end].item == &it) end++;
            bool tree = it.member && it.member->kind == Member::Kind::Dir &&
                        (it.unit.op == Op::Add || it.unit.op == Op::Replace);
            bool ok = tree;
            std::vector<EntryStat> out;
            for (size_t k = i; k < end && ok; k++) {
                Target& t = order_[k];
                ok = t.stat_ok && (t.after.type != capture::Type::Dir || (t.after.mode & 0500) == 0500);
                if (!ok || t.root) continue;
                out.push_back(std::move(t.after));
                out.back().path = t.m->path.substr(it.unit.path.size() + 1);
            }
            if (ok) {
                auto less = [](const EntryStat& a, const EntryStat& b) { return a.path < b.path; };
                if (!std::is_sorted(out.begin(), out.end(), less)) std::sort(out.begin(), out.end(), less);
                it.staged_tree = std::move(out);
            }
            i = end;
        }
    }

    // The archive is decompressed and parsed on this thread while two others
    // make the files (open, write, attributes, close), each taking whole
    // directories in turn: creating files is the longest part on disk, and
    // creates in different directories do not wait for each other's
    // directory lock. Each writer has its own fds and directory cache; the
    // durability list and the progress line lock for them. With no thread
    // to be had, everything is written on this one.
    static constexpr size_t kWriters = 2;

    base::Result<void> stage_data() {
        Handoff hs[kWriters];
        base::Result<void> werr[kWriters] = {base::Ok(), base::Ok()};
        // Every writer's state exists before the first writer starts, and
        // each gets its own by pointer: a writer that indexed a vector the
        // next push_back was reallocating read a freed element (an ASan
        // abort with the staged tree left on the target; see
        // docs/security.md, "All-or-nothing").
        std::unique_ptr<FileOut> outs[kWriters];
        for (auto& o : outs) o = std::make_unique<FileOut>(ctx_.root);
        std::vector<std::thread> writers;
        writers.reserve(kWriters);
        auto stop_all = [&hs] {
            for (auto& h : hs) h.stop();
        };
        for (size_t i = 0; i < kWriters; i++) {
            try {
                writers.emplace_back([this, &hs, &werr, &stop_all, out = outs[i].get(), i] {
                    werr[i] = consume(hs[i], *out);
                    if (!werr[i].ok()) stop_all();  // the reader and the other writer stop too
                });
            } catch (const std::system_error&) {
                break;  // fewer writers: the files go to those there are
            }
        }
        size_t n = writers.size();
        // Joined on every way out (a writer stops when its hand-off does).
        base::Defer join([&] {
            stop_all();
            for (auto& w : writers)
                if (w.joinable()) w.join();
        });
        FileOut inline_out(ctx_.root);
        base::Result<void> inline_err = base::Ok();
        size_t turn = 0;
        std::string_view last_parent;
        auto r = ctx_.patch.read_data([&](const Member& m) -> capture::DataSink {
            capture::DataSink tap = ctx_.tap ? (*ctx_.tap)(m) : nullptr;
            auto it = files_.find(m.path);
            if (it == files_.end()) return tap;
            Target* t = it->second;
            if (n == 0) {
                if (inline_err.ok()) inline_err = begin_file(ctx_, inline_out, *t);
                if (!inline_err.ok()) return nullptr;
                return [this, &inline_out, tap](uint64_t off, const char* data, size_t len) -> base::Result<void> {
                    if (tap) TRY_VOID(tap(off, data, len));
                    return write_chunk(ctx_, inline_out, off, data, len);
                };
            }
            std::string_view staged = t->staged;
            size_t slash = staged.rfind('/');
            std::string_view parent = slash == std::string_view::npos ? std::string_view() : staged.substr(0, slash);
            if (parent != last_parent) {
                turn = (turn + 1) % n;  // a new directory: the next writer's
                last_parent = parent;   // a view into order_, which outlives this pass
            }
            Handoff& h = hs[turn];
            if (h.stopped()) return nullptr;
            h.open(t);
            bool kept = ctx_.patch.kept(m);  // its bytes stay put: handed on, not copied
            return [&h, tap, kept](uint64_t off, const char* data, size_t len) -> base::Result<void> {
                if (h.stopped()) return base::error("staging stopped");  // the writer's error is reported
                if (tap) TRY_VOID(tap(off, data, len));
                if (kept) h.write_ref(off, data, len);
                else h.write(off, data, len);
                return base::Ok();
            };
        });
        if (n == 0) {
            TRY_VOID(inline_err);
            TRY_VOID(r);
            TRY_VOID(finish_file(ctx_, inline_out));
            return base::Ok();
        }
        for (size_t i = 0; i < n; i++) {
            if (r.ok()) hs[i].close();
            else hs[i].stop();
        }
        for (auto& w : writers) w.join();
        for (size_t i = 0; i < n; i++) TRY_VOID(werr[i]);
        TRY_VOID(r);
        return base::Ok();
    }

    // A writer thread: everything handed to it, in order (its caller stops
    // every hand-off when it fails).
    base::Result<void> consume(Handoff& h, FileOut& out) {
        HandoffBatch b;
        while (h.take(b)) {
            for (const auto& op : b.ops) {
                auto r = op.tag ? begin_file(ctx_, out, *static_cast<Target*>(const_cast<void*>(op.tag)))
                                : write_chunk(ctx_, out, op.off, op.ext ? op.ext : b.buf.data() + op.pos, op.len);
                if (!r.ok()) {
                    h.stop();
                    return r;
                }
            }
        }
        if (h.stopped()) return base::Ok();  // the reader or the other writer failed: reported there
        return finish_file(ctx_, out);
    }

    void add_target(PlanItem& it, const Member* m, bool root, uint64_t& total, uint64_t& count) {
        uint64_t size = root && it.content ? it.content->size() : m->size;
        order_.push_back({&it, m, root ? it.unit.tmp : staged_path(it, m->path), root, size});
        // A staged entry's own directory (inside a staged tree, that
        // directory is staged too and kept open by dir_attrs).
        if (root) ctx_.dur.dir(split_parent(order_.back().staged).first);
        if (m->kind == Member::Kind::File) total += size;
        count++;
    }

    base::Result<void> guard(const Target& t, base::Result<void> r) {
        if (!r.ok()) return staging_error(t.m->path, r.error());
        TRY_VOID(fault_point("apply", "stage"));
        TRY_VOID(base::stop_if_interrupted());  // a Ctrl+C: rolled back, then raised again
        ctx_.progress.add(0, 1);
        return base::Ok();
    }

    base::Result<void> make_node(Target& t) {
        TRY(auto at, at_beneath(ctx_.dirs, t.staged));
        auto [dfd, name] = at;
        int rc = 0;
        switch (t.m->kind) {
            case Member::Kind::Dir: rc = ::mkdirat(dfd, name.c_str(), 0700); break;
            case Member::Kind::Symlink: rc = ::symlinkat(t.m->link_target.c_str(), dfd, name.c_str()); break;
            case Member::Kind::Fifo: rc = ::mknodat(dfd, name.c_str(), S_IFIFO | 0600, 0); break;
            default: return base::error("unexpected member type");
        }
        if (rc != 0) return base::sys_error("create");
        if (t.m->kind == Member::Kind::Dir) return base::Ok();
        struct timespec ts[2] = {{0, UTIME_OMIT}, timespec_of(t.m->mtime_ns)};
        if (::utimensat(dfd, name.c_str(), ts, AT_SYMLINK_NOFOLLOW) != 0) return base::sys_error("set mtime");
        if (t.m->kind == Member::Kind::Fifo &&
            ::fchmodat(dfd, name.c_str(), t.m->mode & 0777, AT_SYMLINK_NOFOLLOW) != 0)
            return base::sys_error("chmod");
        struct stat st {};
        if (::fstatat(dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
            t.after = entry_stat(st, "");
            t.stat_ok = true;
        }
        return base::Ok();
    }

    base::Result<void> make_link(const Target& t) {
        auto src = staged_.find(t.m->link_target);
        if (src == staged_.end()) return base::error("hard link target not staged");
        TRY(auto from, at_beneath(ctx_.dirs, *src->second));
        TRY(auto to, at_beneath(ctx_.dirs, t.staged));
        if (::linkat(from.first, from.second.c_str(), to.first, to.second.c_str(), 0) != 0)
            return base::sys_error("link");
        return base::Ok();
    }

    base::Result<void> dir_attrs(Target& t) {
        TRY(auto at, at_beneath(ctx_.dirs, t.staged));
        TRY(base::Fd d, base::open_at(at.first, at.second, O_RDONLY | O_DIRECTORY | O_NOFOLLOW));
        TRY_VOID(set_user_xattrs(d.get(), t.m->xattrs));
        PlanItem& it = *t.item;
        if (t.root && it.unit.op == Op::Replace && it.before.type == capture::Type::Dir) {
            auto [parent, name] = split_parent(it.unit.path);
            TRY(int pfd, ctx_.dirs.get(parent));
            TRY(base::Fd orig, base::open_at(pfd, name, O_PATH | O_NOFOLLOW));
            TRY_VOID(copy_acls(orig.get(), d.get()));
        }
        // Our own staged dirs: drop cached fds that a mode change could make stale for writing.
        ctx_.dirs.clear();
        // A sticky dir keeps its sticky bit: 01777 without it is world-writable
        // for everyone's files. (Set-id bits are never applied.)
        TRY_VOID(set_mode_mtime(d.get(), t.m->mode, t.m->mtime_ns, true, t.m->mode & S_ISVTX));
        note_stat(t, d.get());  // its entries are all made by now
        ctx_.dur.keep(d.get());
        return base::Ok();
    }

    // In-place updates and metadata changes overwrite the original: keep
    // what undo needs (attributes; for in-place, a copy of the content).
    base::Result<void> save_old(PlanItem& it) {
        if (it.unit.op != Op::InPlace && it.unit.op != Op::Meta) return base::Ok();
        auto [parent, name] = split_parent(it.unit.path);
        TRY(int pfd, ctx_.dirs.get(parent));
        TRY(base::Fd orig, base::open_at(pfd, name, O_PATH | O_NOFOLLOW));
        struct stat st {};
        if (::fstat(orig.get(), &st) != 0) return base::sys_error("stat " + it.unit.path);
        it.unit.old_ino = st.st_ino;
        it.unit.old_mode = st.st_mode & 07777;
        it.unit.old_mtime_ns = ns_of(st.st_mtim);
        if (S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)) {
            TRY(it.unit.old_xattrs, get_user_xattrs(orig.get()));
        }
        if (it.unit.op != Op::InPlace) return base::Ok();
        // O_NONBLOCK: a FIFO swapped in meanwhile must not block the open.
        TRY(base::Fd in, base::open_at(pfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK));
        struct stat now {};
        if (::fstat(in.get(), &now) != 0 || !S_ISREG(now.st_mode) || now.st_ino != it.unit.old_ino)
            return staging_error(it.unit.path, base::error("it was replaced on the target while applying"));
        TRY(base::Fd out, base::open_at(ctx_.store_fd, it.unit.slot, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
        auto r = copy_data(in.get(), out.get());
        if (!r.ok()) return staging_error(it.unit.path, r.error().context("saving the original for undo"));
        ctx_.dur.keep(out.get());
        if (ctx_.store_rel.empty()) ctx_.dur.keep(ctx_.store_fd);  // the store is in the state dir
        else ctx_.dur.dir(ctx_.store_rel);
        return out.close();
    }

    StageCtx& ctx_;
    std::vector<Target> order_;
    // Keyed by member paths, which the patch holds for as long as staging runs.
    std::unordered_map<std::string_view, Target*> files_;
    std::unordered_map<std::string_view, const std::string*> staged_;
};

}  // namespace

base::Result<void> stage_all(StageCtx& ctx, std::vector<PlanItem>& items) {
    Stager s(ctx);
    return s.run(items);
}

}  // namespace review
