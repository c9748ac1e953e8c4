#include "capture/scan/scan.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <memory>
#include <set>
#include <unordered_set>

#include "capture/scan/classify.h"
#include "capture/scan/fingerprint.h"
#include "capture/scan/gone.h"
#include "capture/scan/ignore.h"
#include "capture/scan/look.h"
#include "capture/scan/stack.h"
#include "capture/scan/stale.h"
#include "capture/scan/verdicts.h"
#include "capture/scan/xattr.h"
#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/base/thread.h"

namespace capture {

using base::Result;

std::string join_path(const std::string& dir, const std::string& name) { return dir.empty() ? name : dir + "/" + name; }

namespace {

int64_t ns_of(const struct statx_timestamp& t) { return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec; }

StatKey stat_key(const struct statx& st) {
    StatKey k;
    k.dev = (static_cast<uint64_t>(st.stx_dev_major) << 32) | st.stx_dev_minor;
    k.ino = st.stx_ino;
    k.size = st.stx_size;
    k.mtime_ns = ns_of(st.stx_mtime);
    k.ctime_ns = ns_of(st.stx_ctime);
    return k;
}

// What stat_key() takes from a statx.
constexpr unsigned kKeyMask = STATX_INO | STATX_SIZE | STATX_MTIME | STATX_CTIME;

using DirEnt = base::DirEntry;

Result<std::vector<DirEnt>> list_dir(int dirfd, const std::string& what) {
    auto names = base::list_dir(dirfd);
    if (!names) return names.error().context("listing " + what);
    return names;
}

// A dir that hides its real counterpart (opaque, cut off by a step, or below
// such a dir): the real entries it lacks are deletions (capture/scan/gone.h).
struct Hiding {
    int64_t since = 0;          // the hiding dir's copy-up time (staleness of what it deleted)
    std::vector<DirEnt> lower;  // the real dir's entries
};

class Walker {
public:
    Walker(const ScanOptions& o, ScanResult* out)
        : opts_(o), out_(out), excluded_(o.excluded.begin(), o.excluded.end()) {
        if (!opts_.keep_files) return;
        struct rlimit rl;
        if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 4096)
            fd_limit_ = std::min<uint64_t>(rl.rlim_cur, 1 << 20);
        out_->files = std::make_shared<std::vector<base::Fd>>();
    }
    Walker(const Walker&) = delete;
    Walker& operator=(const Walker&) = delete;

    // xwh: the upper dir may hold xattr whiteouts (so d_type cannot tell a file).
    // hide: the dir hides the real dir `low` (Hiding), or null.
    Result<void> dir(const UpperDir& up, int low, const std::string& prefix, bool xwh, const Hiding* hide = nullptr) {
        Level level(this);
        TRY(UpperListing names, list_upper(up, prefix.empty() ? "the upper layer" : base::display_path(prefix)));
        Here h{up, low, prefix, xwh, names, hide};
        std::vector<std::string> gone;
        if (hide) gone = only_below(names.names, hide->lower);
        h.gone = &gone;
        std::vector<size_t> cuts = split_points(names.names);
        if (cuts.empty()) return entries(h, 0, names.names.size());
        return in_pieces(h, cuts);
    }

    // A second walker may take pieces of one dir (spare_cpu).
    bool spare_cpu = false;

private:
    // Pieces of the split dir: enough that two walkers taking the next one
    // as they finish end within a piece of each other (two halves ended
    // 60-230 ms apart in a 10,000-file save).
    static constexpr size_t kPieces = 16;

    // The dir being walked.
    struct Here {
        const UpperDir& up;
        int low;
        const std::string& prefix;
        bool xwh;
        const UpperListing& names;
        const Hiding* hide;
        const std::vector<std::string>* gone = nullptr;  // with hide: the real entries the upper lacks
    };

    // Upper entries [from, to), and in name order among them the real
    // entries a hiding dir lacks (gone_span shares those out between halves).
    Result<void> entries(const Here& h, size_t from, size_t to) {
        auto [g, g_end] = gone_span(*h.gone, h.names.names, from, to);
        for (size_t i = from; i < to; i++) {
            for (; g < g_end && (*h.gone)[g] < h.names.names[i].name; g++) TRY_VOID(gone_entry(h, (*h.gone)[g]));
            TRY_VOID(entry(h.up, h.names, i, h.low, h.prefix, h.xwh, h.hide));
        }
        for (; g < g_end; g++) TRY_VOID(gone_entry(h, (*h.gone)[g]));
        return base::Ok();
    }

    // A real entry that a hiding dir lacks: deleted, as a whiteout there
    // would have deleted it. Its layer (the writer finds the parent dir
    // there; blame's step) is the lowest the merged dir reaches: the one
    // that cut it off from the real tree.
    Result<void> gone_entry(const Here& h, const std::string& name) {
        return gone_at(h.low, h.prefix, name, h.hide->since, h.up.ids.back());
    }

    // Is a hidden path strictly beneath `path`? A real dir holding one (made
    // there after the run, when nothing covered it) is never deleted whole.
    bool hidden_beneath(const std::string& path) const {
        for (const auto& x : excluded_)
            if (x.size() > path.size() + 1 && x[path.size()] == '/' && x.compare(0, path.size(), path) == 0)
                return true;
        return false;
    }

    // A real dir the upper deleted (or lacks) that holds a hidden path: it
    // stays, and each real entry in it is deleted in its place, the hidden
    // ones never (a deletion of the dir would take the hidden path with it).
    Result<void> gone_around_hidden(int low, const std::string& prefix, int64_t since, uint32_t layer) {
        Level level(this);
        TRY(auto names, list_dir(low, base::display_path(prefix)));
        for (const auto& e : names) TRY_VOID(gone_at(low, prefix, e.name, since, layer));
        return base::Ok();
    }

    Result<void> gone_at(int low, const std::string& prefix, const std::string& name, int64_t since, uint32_t layer) {
        std::string path = join_path(prefix, name);
        if (!excluded_.empty() && excluded_.count(path)) return base::Ok();  // a hidden path: never captured
        TRY(Seen l, look(low, name, path, false, !opts_.with_base));
        if (!l.exists) return base::Ok();
        if (l.side.type == Type::Dir && l.fd.valid() && !excluded_.empty() && hidden_beneath(path))
            return gone_around_hidden(l.fd.get(), path, since, layer);
        Seen u;
        u.exists = true;
        u.side.type = Type::Whiteout;
        u.st.stx_mask = STATX_BTIME;
        u.st.stx_btime.tv_sec = since / 1000000000;
        u.st.stx_btime.tv_nsec = static_cast<uint32_t>(since % 1000000000);
        Verdict v = classify(u.side, l.side, [] { return false; });
        if (!v.is_change) return base::Ok();
        bool now_ignored = !in_ignored_ && is_ignored(u, l, path);
        if (now_ignored && !opts_.include_ignored) {
            out_->ignored++;
            return base::Ok();
        }
        return record(u, l, v, path, in_ignored_ || now_ignored, layer);
    }

    // The first dir with two or more subdirs is split (once); empty: not here.
    std::vector<size_t> split_points(const std::vector<DirEnt>& names) {
        if (!spare_cpu) return {};
        std::vector<size_t> cuts = base::split_by_subdirs(names, kPieces);
        if (!cuts.empty()) spare_cpu = false;
        return cuts;
    }

    // The pieces of one dir, each walked by a walker of its own into its own
    // result, two at a time (this thread and one more, each taking the next
    // piece), then appended to ours in piece order: the walk order stays.
    Result<void> in_pieces(const Here& h, const std::vector<size_t>& cuts) {
        size_t n = cuts.size() + 1;
        std::vector<ScanResult> results(n);
        std::vector<std::unique_ptr<Walker>> walkers;
        for (size_t i = 0; i < n; i++) {
            if (out_->files) results[i].files = std::make_shared<std::vector<base::Fd>>();
            auto w = std::make_unique<Walker>(opts_, &results[i]);
            w->fd_limit_ = fd_limit_;
            w->counts_ = counts_;
            w->in_ignored_ = in_ignored_;
            // What this walker already recorded: the real subtree of an opaque
            // dir above the split, which the pieces' "absent" records must not repeat.
            w->seen_base_ = seen_base_;
            walkers.push_back(std::move(w));
        }
        std::vector<Result<void>> rs(n, base::Ok());
        std::atomic<size_t> next{0};
        std::atomic<bool> failed{false};
        auto take = [&] {
            for (size_t i; !failed && (i = next++) < n;) {
                size_t from = i == 0 ? 0 : cuts[i - 1], to = i + 1 < n ? cuts[i] : h.names.names.size();
                rs[i] = walkers[i]->entries(h, from, to);
                if (!rs[i]) failed = true;
            }
            return !failed;
        };
        base::run_halves(take, [&] { take(); });
        for (const auto& r : rs)
            if (!r) return r;
        // One allocation for all the pieces' items: growing by doubling moved
        // every Item already there again (~5% of a 10,000-file save's main thread).
        size_t more = 0;
        for (const auto& r : results) more += r.items.size();
        out_->items.reserve(out_->items.size() + more);
        for (size_t i = 0; i < n; i++) {
            ScanResult& theirs = results[i];
            size_t base_index = out_->items.size();
            for (auto& it : theirs.items) out_->items.push_back(std::move(it));
            // Deduplicated against ours already (seen_base_ above); theirs are new.
            for (auto& b : theirs.base) out_->base.push_back(std::move(b));
            for (auto& x : theirs.excluded_seen) out_->excluded_seen.push_back(std::move(x));
            out_->ignored += theirs.ignored;
            seen_base_.insert(walkers[i]->seen_base_.begin(), walkers[i]->seen_base_.end());
            if (theirs.files) {
                for (auto& f : *theirs.files) out_->files->push_back(std::move(f));
                for (size_t k : walkers[i]->kept_items_) kept_items_.push_back(base_index + k);
            }
        }
        return base::Ok();
    }

    int64_t copyup_ns(const Seen& u) const {
        if (u.st.stx_mask & STATX_BTIME) return ns_of(u.st.stx_btime);
        return opts_.session_start_ns;
    }

    Result<BaseEntry> base_of(const Seen& l, const std::string& path, int64_t copied, bool* text = nullptr) {
        BaseEntry b;
        b.path = path;
        b.type = l.side.type;
        b.mode = l.side.mode;
        b.size = l.side.size;
        if (l.side.type == Type::File) {
            TRY(b.fingerprint, fingerprint_fd(l.fd.get(), l.side.size, text));
        } else if (l.side.type == Type::Symlink) {
            b.fingerprint = fingerprint_bytes(l.side.link_target);
        }
        b.stale =
            stale_copy(path, ns_of(l.st.stx_ctime), copied, b.mode, opts_.known_bases, [&] { return b.fingerprint; });
        return b;
    }

    // status (ScanOptions::mark_stale): the change's real entry, as base_of
    // would judge it; its content is read only when a known base may clear it.
    void mark_stale(const Seen& u, const Seen& l, int low, const std::string& name, const std::string& path) {
        Change& c = out_->items.back().change;
        c.stale = stale_copy(path, ns_of(l.st.stx_ctime), copyup_ns(u), l.side.mode, opts_.known_bases, [&] {
            if (l.side.type == Type::Symlink) return fingerprint_bytes(l.side.link_target);
            if (l.side.type != Type::File) return std::string();
            base::Fd own;
            if (!l.fd.valid()) own.reset(::openat(low, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            auto fp = fingerprint_fd(l.fd.valid() ? l.fd.get() : own.get(), l.side.size);
            return fp ? fp.value() : std::string();
        });
    }

    // Paths are unique except where a real subtree record (added first, when
    // its dir is recorded) meets an upper entry's absent record below an
    // opaque dir: only subtree paths need remembering.
    void add_base(BaseEntry b, bool subtree = false) {
        if (subtree) {
            if (!seen_base_.insert(b.path).second) return;
        } else if (!seen_base_.empty() && seen_base_.count(b.path)) {
            return;
        }
        out_->base.push_back(std::move(b));
    }

    // Every entry below a deleted or replaced real dir, so apply notices an
    // edit deep inside.
    Result<void> lower_subtree(int low, const std::string& prefix, int64_t copied) {
        Level level(this);
        TRY(auto names, list_dir(low, base::display_path(prefix)));
        for (const auto& e : names) {
            std::string path = join_path(prefix, e.name);
            TRY(Seen l, look(low, e.name, path, false));
            if (!l.exists) continue;
            TRY(BaseEntry b, base_of(l, path, copied));
            add_base(std::move(b), true);
            if (l.side.type == Type::Dir) TRY_VOID(lower_subtree(l.fd.get(), path, copied));
        }
        return base::Ok();
    }

    Result<void> entry(const UpperDir& stack, const UpperListing& ls, size_t index, int low, const std::string& prefix,
                       bool parent_xwh, const Hiding* parent_hide) {
        const DirEnt& e = ls.names[index];
        const std::string& name = e.name;
        uint32_t at = ls.holder(index);
        int up = stack.fds[at];
        std::string joined;
        const std::string& up_name = stack.name_in(at, name, &joined);  // in up
        std::string path = join_path(prefix, name);
        if (!excluded_.empty() && excluded_.count(path)) {
            out_->excluded_seen.push_back(path);
            return base::Ok();
        }
        // Looked up once, before the stat (will_read), and reused by note().
        peek_ = opts_.reader && opts_.verdicts && e.type == DT_REG ? opts_.verdicts->peek(path) : VerdictCache::Peek{};
        Seen u;
        bool typed = false;
        if (low < 0 && opts_.summary_only && !opts_.with_base && !parent_xwh) {
            TRY(typed, quick_look(up, up_name, e.type, &u));
        }
        if (!typed) {
            // Files are opened only when the verdict needs more than a stat:
            // an addition never does, and for the text summary only a file
            // over a real file of the same size does (see pair below).
            bool defer = !opts_.with_base && (low < 0 || opts_.summary_only);
            TRY(u, look(up, up_name, path, true, defer, e.type, defer && e.type == DT_REG && will_read(path)));
        }
        if (!u.exists) return base::Ok();
        // A dir: the layers' dirs merged under it; cut off from the real tree
        // by a step below, it is opaque, as one upper would have made it.
        UpperDir sub_up;
        if ((u.side.type == Type::Dir || u.side.type == Type::OpaqueDir) && u.fd.valid()) {
            bool cut = false;
            TRY(sub_up, merged_dir(stack, ls, index, std::move(u.fd), u.side.type == Type::OpaqueDir, &cut, path,
                                   opts_.indexes));
            if (cut) u.side.type = Type::OpaqueDir;
            sub_up.xwh = sub_up.xwh || u.xwhiteouts;
        }
        Seen l;
        // look() opens only regular files and dirs, never a fifo or socket.
        if (low >= 0) {
            TRY(l, look(low, name, path, false, !opts_.with_base));
        }
        // A dir that hides a real dir (opaque, or below a hiding dir) is
        // compared with it entry by entry; one whose entries cannot be
        // listed stays a replacement.
        Hiding hide;
        bool hiding = (u.side.type == Type::OpaqueDir || (parent_hide && u.side.type == Type::Dir)) && l.exists &&
                      l.side.type == Type::Dir && l.fd.valid();
        if (hiding) {
            auto lower = base::list_dir(l.fd.get());
            // A real name starting with .wh. cannot be deleted by a whiteout
            // member of its own (writer.cc): that dir stays a replacement.
            auto wh = [](const DirEnt& x) { return x.name.rfind(".wh.", 0) == 0; };
            // (Not over a hidden path: the replacement would delete it; save
            // then fails on the name, naming it.)
            bool hidden = !excluded_.empty() && hidden_beneath(path);
            bool listed = lower && (hidden || std::none_of(lower->begin(), lower->end(), wh));
            if (listed) {
                hide.lower = std::move(lower.value());
                hide.since = parent_hide ? parent_hide->since : copyup_ns(u);
            } else {
                u.side.type = Type::OpaqueDir;
                l.side.unlisted = true;
                hiding = false;
            }
        }
        // The one case that reads content and compares xattrs.
        bool pair = u.side.type == Type::File && l.exists && l.side.type == Type::File && u.side.size == l.side.size;
        std::optional<Cached> known;
        PairKey key;
        if (pair && opts_.verdicts) {
            key = PairKey{stat_key(u.st), stat_key(l.st)};
            known = opts_.verdicts->find(path, key);
        }
        if (pair && !known) {
            TRY_VOID(complete(up, up_name, path, true, &u));
            TRY_VOID(complete(low, name, path, false, &l));
        }
        if (known) u.side.xattrs_same = known->same_xattrs ? 1 : 0;
        std::string compare_error;
        int compared = -1;  // the content verdict, when read
        auto content_equal = [&]() -> bool {
            if (known) return known->same_content;
            auto r = same_content(u.fd.get(), l.fd.get(), u.side.size);
            if (!r) {
                compare_error = r.error().message;
                return false;
            }
            compared = r.value() ? 1 : 0;
            return r.value();
        };
        Verdict v = classify(u.side, l.side, content_equal);
        if (!compare_error.empty()) return base::error("comparing " + base::display_path(path) + ": " + compare_error);
        if (compared >= 0 && opts_.verdicts)
            opts_.verdicts->record(path, key, Cached{compared == 1, u.side.xattrs == l.side.xattrs});
        if (!v.error.empty()) return base::error("cannot capture " + base::display_path(path) + ": " + v.error);
        bool now_ignored = !in_ignored_ && is_ignored(u, l, path);
        if (now_ignored && !opts_.include_ignored) {
            // Left out with all below it: counted, never recorded.
            out_->ignored += v.is_change ? 1 : 0;
            if (v.descend) out_->ignored += count_below(sub_up, path);
            return base::Ok();
        }
        if (v.is_change && l.side.type == Type::Dir && !excluded_.empty() && hidden_beneath(path)) {
            if (u.side.type == Type::Whiteout && l.fd.valid())
                return gone_around_hidden(l.fd.get(), path, copyup_ns(u), stack.ids[at]);
            // A real dir holding a hidden path, replaced by a non-dir: the
            // replacement would delete the hidden path too. Reported, never
            // stored or applied (as a socket is).
            if (v.kind == Kind::TypeChanged) v.captured = false;
        }
        if (v.is_change) {
            TRY_VOID(record(u, l, v, path, in_ignored_ || now_ignored, stack.ids[at]));
            if (opts_.mark_stale && !opts_.with_base && l.exists && v.captured) mark_stale(u, l, low, name, path);
            if (opts_.reader) read_content(up, up_name, l.exists ? low : -1, name, u);
        }
        if (v.descend && !sub_up.fds.empty()) {
            base::Fd sub_low;
            if (v.descend_lower && l.exists) sub_low = std::move(l.fd);
            bool was = in_ignored_;
            in_ignored_ = was || now_ignored;
            bool hides = hiding && sub_low.valid();
            TRY_VOID(dir(sub_up, sub_low.valid() ? sub_low.get() : -1, path, sub_up.xwh, hides ? &hide : nullptr));
            in_ignored_ = was;
        }
        return base::Ok();
    }

    // Is the file at `path` likely to be read by the content reader? Then
    // the walk opens it rather than only stat'ing it. Not when the verdict
    // cache knows it (risk-free, or an unchanged copy): a repeated status
    // opens nothing.
    bool will_read(const std::string& path) const {
        return opts_.reader && !peek_.known && opts_.reader->wants_path(path);
    }

    // The change just recorded, for the content reader: from the fd the walk
    // stat'ed, or opened here (a file typed from d_type, or only stat'ed)
    // and checked to be that file. Left NotRead when it cannot be opened:
    // the risk scan then reads it by path, as it reads the rest.
    void read_content(int up, const std::string& up_name, int low, const std::string& name, const Seen& u) {
        Change& c = out_->items.back().change;
        if (c.type != Type::File || c.risk_free_cached || !opts_.reader->wants(c)) return;
        uint64_t size = u.side.size;
        base::Fd own;
        int fd = u.fd.get();
        if (!u.fd.valid()) {
            own.reset(::openat(up, up_name.c_str(), O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
            struct stat st;
            if (!own.valid() || ::fstat(own.get(), &st) != 0 || !S_ISREG(st.st_mode)) return;
            bool stated = (u.st.stx_mask & STATX_INO) != 0;
            if (stated && st.st_ino != u.st.stx_ino) return;
            size = static_cast<uint64_t>(st.st_size);
            fd = own.get();
        }
        c.content_read = opts_.reader->read(c, fd, size, low, name);
    }

    // An entry the ignore rules match (its parents were not ignored: the walk
    // does not descend into an ignored dir). The root's rules file never is.
    bool is_ignored(const Seen& u, const Seen& l, const std::string& path) const {
        if (!opts_.ignore || opts_.ignore->empty() || path == kIgnoreFile) return false;
        Type t = u.side.type;
        bool is_dir =
            t == Type::Dir || t == Type::OpaqueDir || (t == Type::Whiteout && l.exists && l.side.type == Type::Dir);
        return opts_.ignore->match(path, is_dir);
    }

    // Entries below an ignored upper dir (names only: no stat each).
    uint64_t count_below(const UpperDir& d, const std::string& prefix) {
        if (d.fds.empty()) return 0;
        auto names = list_upper(d, "");
        if (!names) return 0;
        uint64_t n = names->names.size();
        for (size_t i = 0; i < names->names.size(); i++) {
            if (names->names[i].type != DT_DIR) continue;
            std::string joined;
            const std::string& here = d.name_in(names->holder(i), names->names[i].name, &joined);
            base::Fd top(
                ::openat(d.fds[names->holder(i)], here.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            if (!top.valid()) continue;
            auto raw = read_xattrs(top.get());
            bool opaque = raw && overlay_marks(raw.value()).opaque, cut = false;
            std::string path = join_path(prefix, names->names[i].name);
            auto sub = merged_dir(d, names.value(), i, std::move(top), opaque, &cut, path, opts_.indexes);
            if (sub) n += count_below(sub.value(), path);
        }
        return n;
    }

    Result<void> record(Seen& u, const Seen& l, const Verdict& v, const std::string& path, bool ignored,
                        uint32_t layer) {
        Item it;
        it.layer = layer;
        it.change.layer = layer;
        Change& c = it.change;
        c.path = path;
        c.ignored = ignored;
        c.kind = v.kind;
        c.captured = v.captured;
        Type t = u.side.type;
        c.type = t == Type::Whiteout ? Type::None : t == Type::OpaqueDir ? Type::Dir : t;
        if (c.type != Type::None) {
            c.size = u.side.size;
            c.mode = u.side.mode;
            c.link_target = std::move(u.side.link_target);
            c.xattrs = std::move(u.side.xattrs);
            c.mtime_ns = ns_of(u.st.stx_mtime);
        }
        if (l.exists) {
            c.old_type = l.side.type;
            c.old_mode = l.side.mode;
            c.old_nlink = l.st.stx_nlink;
        }
        // For status's risk marks: the stats the file's content is read at
        // (none when typed from d_type alone).
        if (opts_.verdicts && c.type == Type::File && (u.st.stx_mask & kKeyMask) == kKeyMask)
            c.risk_free_cached =
                opts_.verdicts->note(path, PairKey{stat_key(u.st), l.exists ? stat_key(l.st) : StatKey{}}, &peek_);
        it.whiteout = v.whiteout_member;
        it.opaque = v.opaque_member;
        it.ino = u.st.stx_ino;
        it.nlink = u.st.stx_nlink;
        bool keep =
            c.type == Type::File && v.captured && u.fd.valid() && out_->files && counts_->kept < kMaxKept && room() > 0;
        if (keep) {
            it.fd = u.fd.get();
            out_->files->push_back(std::move(u.fd));
            ++counts_->kept;
            kept_items_.push_back(out_->items.size());
        }
        out_->items.push_back(std::move(it));
        if (!opts_.with_base || !v.captured) return base::Ok();
        int64_t copied = copyup_ns(u);
        if (!l.exists) {
            BaseEntry b;
            b.path = path;
            b.absent = true;
            add_base(std::move(b));
            return base::Ok();
        }
        Item& last = out_->items.back();
        bool keep_content = opts_.keep_base_max > 0 && last.change.kind == Kind::Modified &&
                            last.change.type == Type::File && l.side.type == Type::File &&
                            l.side.size <= opts_.keep_base_max;
        TRY(BaseEntry b, base_of(l, path, copied, keep_content ? &last.base_text : nullptr));
        add_base(std::move(b));
        if (v.lower_subtree && l.fd.valid()) TRY_VOID(lower_subtree(l.fd.get(), path, copied));
        return base::Ok();
    }

    const ScanOptions& opts_;
    ScanResult* out_;
    std::unordered_set<std::string> excluded_;
    // Kept files never take fds the walk needs: each level open holds up to
    // two dir fds (upper and real), and a deeper level gives back the most
    // recently kept files (the writer then opens those again).
    static constexpr uint64_t kMaxKept = 65536;
    static constexpr uint64_t kSpare = 1024;  // entries being looked at, zstd, stdio
    struct Level {
        Walker* w;
        explicit Level(Walker* walker) : w(walker) {
            w->counts_->levels++;
            while (w->out_->files && !w->out_->files->empty() && w->room() < 0) {
                w->out_->items[w->kept_items_.back()].fd = -1;
                w->kept_items_.pop_back();
                w->out_->files->pop_back();
                --w->counts_->kept;
            }
        }
        ~Level() { w->counts_->levels--; }
    };
    int64_t room() const {
        // Files kept and levels open by every walker of this scan.
        uint64_t used = counts_->kept + 2 * counts_->levels + kSpare;
        return static_cast<int64_t>(fd_limit_) - static_cast<int64_t>(used);
    }
    uint64_t fd_limit_ = 0;  // 0: keep nothing (a small limit)
    // Shared by the walkers of a split dir: the fds they hold between them.
    struct Counts {
        std::atomic<uint64_t> kept{0};    // files kept open (Item::fd)
        std::atomic<uint64_t> levels{0};  // dir levels open (up to two fds each)
    };
    Counts own_counts_;
    Counts* counts_ = &own_counts_;
    bool in_ignored_ = false;         // below an ignored dir (with include_ignored)
    VerdictCache::Peek peek_;         // the cache's slot of the entry being looked at (a file)
    std::vector<size_t> kept_items_;  // index in out_->items of each kept file, in files order
    std::set<std::string> seen_base_;
};

}  // namespace

Result<ScanResult> scan_upper(int upper_fd, int lower_fd, const ScanOptions& opts) {
    return scan_layers({upper_fd}, lower_fd, opts);
}

Result<ScanResult> scan_layers(const std::vector<int>& layer_fds, int lower_fd, const ScanOptions& opts) {
    ScanResult out;
    Walker w(opts, &out);
    w.spare_cpu = opts.threads == 0 ? ::sysconf(_SC_NPROCESSORS_ONLN) > 1 : opts.threads > 1;
    UpperDir root;
    root.fds = layer_fds;
    for (uint32_t i = 0; i < layer_fds.size(); i++) {
        root.ids.push_back(i);
        root.idx.push_back(i < opts.indexes.size() && opts.indexes[i] ? opts.indexes[i]->find("") : nullptr);
    }
    // The root's own markers are not read; assume the worst.
    TRY_VOID(w.dir(root, lower_fd, "", true, nullptr));
    return out;
}

}  // namespace capture
