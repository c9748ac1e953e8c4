// The walk of an upper dir: each entry looked at on both sides, classified,
// recorded (capture/scan/walk/walker.h).
#include "capture/scan/walk/walker.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <memory>

#include "capture/scan/entry/fingerprint.h"
#include "capture/scan/entry/gone.h"
#include "capture/scan/entry/ignore.h"
#include "capture/scan/entry/xattr.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"

namespace capture {

using base::Result;

// Room for `more` elements past the size, still growing geometrically (a
// reserve of the exact size, dir after dir, would copy at each).
template <class T>
static void room_for(std::vector<T>* v, size_t more) {
    if (v->capacity() - v->size() < more) v->reserve(std::max(v->size() + more, 2 * v->capacity()));
}

Walker::Walker(const ScanOptions& o, ScanResult* out)
    : opts_(o), out_(out), excluded_(o.excluded.begin(), o.excluded.end()) {
    if (!opts_.keep_files) return;
    struct rlimit rl;
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > 4096)
        fd_limit_ = std::min<uint64_t>(rl.rlim_cur, 1 << 20);
}

// hide: the dir hides the real dir `low` (Hiding), or null.
// A walk out of fds (a dir fd a level): the tree nests deeper than the
// open-file limit lets it walk. One line, whatever the depth.
static base::Error nested_too_deep(const std::string& prefix) {
    size_t depth = 1 + static_cast<size_t>(std::count(prefix.begin(), prefix.end(), '/'));
    struct rlimit rl {};
    ::getrlimit(RLIMIT_NOFILE, &rl);
    std::string shown = base::display_path(prefix.substr(0, 120));
    std::string top = prefix.substr(0, prefix.find('/'));
    return base::Error{"the session nests dirs " + std::to_string(depth) + " deep (" + shown +
                           "...), more than the open-file limit (" + std::to_string(rl.rlim_cur) +
                           ") lets layover walk; raise it (ulimit -Hn, as root or in limits.conf) or leave it out "
                           "with --ignore " +
                           base::display_path(top),
                       EMFILE};
}

// Past these the walk stops (attack20). It records each dir with its whole
// path and holds each level's, so its memory grows with the square of the
// depth: a chain of one-letter dirs, which costs the command no disk, took
// 1.06 GB for status at 12,000 levels, bound only by the open-file limit.
// Both are far past any real tree's (an absolute path of 2,048 levels passes
// PATH_MAX); a 5,000-deep chain still walks (test-stress).
constexpr size_t kMaxWalkDepth = 6000;
constexpr size_t kMaxWalkPath = size_t{96} << 10;

static base::Error deeper_than_walked(const std::string& prefix, size_t depth) {
    std::string shown = base::display_path(prefix.substr(0, 120));
    return base::Error{"the session nests dirs " + std::to_string(depth) + " deep (" + shown +
                           "...), deeper than layover walks (" + std::to_string(kMaxWalkDepth) +
                           " levels, or a path of 96 KiB); leave it out with --ignore " +
                           base::display_path(prefix.substr(0, prefix.find('/'))),
                       ELOOP};
}

// And past this many bytes of paths over the walk's entries (attack20): each
// is held several times (the change, the verdict cache, the keys), so 20,000
// empty files at an 87 KB path took `status` 8 GB, for 20,000 inodes.
// A real session's paths add up to far less (a million files of 100 bytes:
// 100 MB).
constexpr uint64_t kMaxPathBytes = uint64_t{128} << 20;

static base::Error paths_past_walked(const std::string& path) {
    std::string top = path.substr(0, path.find('/'));
    return base::Error{"the session's paths add up to more than layover walks (128 MiB, at " +
                           base::display_path(path.substr(0, 120)) +
                           "...); leave out what was made there with --ignore " + base::display_path(top),
                       E2BIG};
}

Result<void> Walker::dir(const UpperDir& up, int low, const std::string& prefix, const Hiding* hide) {
    if (prefix.size() > 2 * kMaxWalkDepth) {  // (a level adds two bytes or more)
        size_t depth = 1 + static_cast<size_t>(std::count(prefix.begin(), prefix.end(), '/'));
        if (depth > kMaxWalkDepth || prefix.size() > kMaxWalkPath) return deeper_than_walked(prefix, depth);
    }
    Level level(this);
    auto listed = list_upper(up, prefix.empty() ? "the upper layer" : base::display_path(prefix));
    if (!listed && listed.error().code == EMFILE && !prefix.empty()) return nested_too_deep(prefix);
    if (!listed) return listed.error();
    UpperListing names = std::move(listed.value());
    Here h{up, low, prefix, names, hide};
    std::vector<std::string> gone;
    if (hide) gone = only_below(names.names, hide->lower);
    h.gone = &gone;
    std::vector<size_t> cuts = split_points(names.names);
    if (cuts.empty()) return entries(h, 0, names.names.size());
    return in_pieces(h, cuts);
}

// Upper entries [from, to), and in name order among them the real
// entries a hiding dir lacks (gone_span shares those out between halves).
Result<void> Walker::entries(const Here& h, size_t from, size_t to) {
    auto [g, g_end] = gone_span(*h.gone, h.names.names, from, to);
    // Room for an item and a key per entry at most: grown by doubling, the
    // vectors moved each Item again and faulted in twice their pages (~10%
    // of a first status's page faults; docs/performance.md, "Status: fewer page faults").
    size_t most = to - from + (g_end - g);
    if (!opts_.count_only) room_for(&out_->items, most);
    if (opts_.record_keys) room_for(&out_->keys.real, most);
    for (size_t i = from; i < to; i++) {
        for (; g < g_end && (*h.gone)[g] < h.names.names[i].name; g++) TRY_VOID(gone_entry(h, (*h.gone)[g]));
        TRY_VOID(entry(h.up, h.names, i, h.low, h.prefix, h.hide));
    }
    for (; g < g_end; g++) TRY_VOID(gone_entry(h, (*h.gone)[g]));
    return base::Ok();
}

Result<void> Walker::entry(const UpperDir& stack, const UpperListing& ls, size_t index, int low,
                           const std::string& prefix, const Hiding* parent_hide) {
    const DirEnt& e = ls.names[index];
    const std::string& name = e.name;
    uint32_t at = ls.holder(index);
    int up = stack.fds[at];
    std::string joined;
    const std::string& up_name = stack.name_in(at, name, &joined);  // in up
    std::string path = join_path(prefix, name);
    if (counts_->path_bytes.fetch_add(path.size(), std::memory_order_relaxed) + path.size() > kMaxPathBytes)
        return paths_past_walked(path);
    if (!excluded_.empty() && excluded_.count(path)) {
        out_->excluded_seen.push_back(path);
        return base::Ok();
    }
    // Looked up once, before the stat (will_read), and passed to every
    // later call for the path (find, record, note, record_risk_free).
    peek_ = opts_.verdicts ? opts_.verdicts->peek(path) : VerdictCache::Peek{};
    Seen u;
    {
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
    if (opts_.record_keys && stack.ids[at] == 0 && u.fd.valid() &&
        (u.side.type == Type::Dir || u.side.type == Type::OpaqueDir))
        key_dir(path, u, u.fd.get());
    if ((u.side.type == Type::Dir || u.side.type == Type::OpaqueDir) && u.fd.valid()) {
        bool cut = false;
        TRY(sub_up,
            merged_dir(stack, ls, index, std::move(u.fd), u.side.type == Type::OpaqueDir, &cut, path, opts_.indexes));
        if (cut) u.side.type = Type::OpaqueDir;
    }
    Seen l;
    // look() opens only regular files and dirs, never a fifo or socket.
    if (low >= 0) {
        TRY(l, look(low, name, path, false, !opts_.with_base));
        if (opts_.record_keys) key_real(path, l);
        if (opts_.mark_stale || opts_.note_fresh || (opts_.with_base && opts_.base_stale))
            settle_first_copy(stack, ls, index, name, path, &u, l, parent_hide);
        if (!l.exists && (opts_.mark_stale || (opts_.with_base && opts_.base_stale))) {
            if (u.side.type == Type::Dir) u.gone_real = copied_from_real(stack, ls, index, name);
            // (Only in a real dir changed since the session began: a file
            // deleted there changed it. Elsewhere an addition costs nothing more.)
            else if (u.side.type == Type::File && real_dir_ns > opts_.session_start_ns)
                u.gone_real = file_copied_from_real(stack, ls, index, name, path, u);
        }
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
            // Over a hidden path that was missing at the start, the dir
            // was masked (overlay/mask.h): the command never saw what the
            // host made there during the run, so a real entry changed since
            // the session began is a stale deletion (a conflict), never
            // deleted unseen.
            if (!parent_hide && hidden && opts_.session_start_ns > 0)
                hide.since = std::min(hide.since, opts_.session_start_ns);
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
        known = opts_.verdicts->find(path, key, &peek_);
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
        opts_.verdicts->record(path, key, Cached{compared == 1, u.side.xattrs == l.side.xattrs}, &peek_);
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
        if (opts_.note_fresh && l.exists && v.captured) note_fresh(u, l, low, name, path);
        if (opts_.mark_stale && !opts_.with_base && !opts_.count_only && v.captured) {
            if (l.exists) mark_stale(u, l, low, name, path);
            else out_->items.back().change.stale = u.gone_real || in_gone_real_ || known_gone(u, path) != nullptr;
        }
        if (opts_.reader && !opts_.count_only) read_content(up, up_name, l.exists ? low : -1, name, u);
    }
    if (v.descend && !sub_up.fds.empty()) {
        base::Fd sub_low;
        if (v.descend_lower && l.exists) sub_low = std::move(l.fd);
        bool was = in_ignored_, was_gone = in_gone_real_;
        int64_t was_real = real_dir_ns;
        in_ignored_ = was || now_ignored;
        in_gone_real_ = was_gone || u.gone_real;
        real_dir_ns = sub_low.valid() ? ns_of(l.st.stx_ctime) : 0;
        bool hides = hiding && sub_low.valid();
        TRY_VOID(dir(sub_up, sub_low.valid() ? sub_low.get() : -1, path, hides ? &hide : nullptr));
        in_ignored_ = was;
        in_gone_real_ = was_gone;
        real_dir_ns = was_real;
    }
    return base::Ok();
}

// Is the file at `path` likely to be read by the content reader? Then
// the walk opens it rather than only stat'ing it. Not when the verdict
// cache knows it (risk-free, or an unchanged copy): a repeated status
// opens nothing.
bool Walker::will_read(const std::string& path) const {
    return opts_.reader && !peek_.known && opts_.reader->wants_path(path);
}

// The change just recorded, for the content reader: from the fd the walk
// stat'ed, or opened here (a file typed from d_type, or only stat'ed)
// and checked to be that file. Left NotRead when it cannot be opened:
// the risk scan then reads it by path, as it reads the rest.
void Walker::read_content(int up, const std::string& up_name, int low, const std::string& name, const Seen& u) {
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
    // Learnt here, on the walk's threads, from the slot in hand.
    if (c.content_read == Change::Read::Free && opts_.verdicts) opts_.verdicts->record_risk_free(peek_);
}

// An entry the ignore rules match (its parents were not ignored: the walk
// does not descend into an ignored dir). The root's rules file never is.
bool Walker::is_ignored(const Seen& u, const Seen& l, const std::string& path) const {
    if (!opts_.ignore || opts_.ignore->empty() || path == kIgnoreFile) return false;
    Type t = u.side.type;
    bool is_dir =
        t == Type::Dir || t == Type::OpaqueDir || (t == Type::Whiteout && l.exists && l.side.type == Type::Dir);
    return opts_.ignore->match(path, is_dir);
}

// Entries below an ignored upper dir (names only: no stat each).
uint64_t Walker::count_below(const UpperDir& d, const std::string& prefix) {
    if (d.fds.empty()) return 0;
    // No deeper than the walk itself goes (see dir()): a count, not a refusal.
    if (prefix.size() > kMaxWalkPath ||
        (prefix.size() > 2 * kMaxWalkDepth &&
         static_cast<size_t>(std::count(prefix.begin(), prefix.end(), '/')) >= kMaxWalkDepth))
        return 0;
    auto names = list_upper(d, "");
    if (!names) return 0;
    uint64_t n = names->names.size();
    for (size_t i = 0; i < names->names.size(); i++) {
        if (names->names[i].type != DT_DIR) continue;
        std::string joined;
        const std::string& here = d.name_in(names->holder(i), names->names[i].name, &joined);
        base::Fd top(::openat(d.fds[names->holder(i)], here.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
        if (!top.valid()) continue;
        std::string path = join_path(prefix, names->names[i].name);
        if (opts_.record_keys && d.ids[names->holder(i)] == 0) key_ignored_dir(path, top.get());
        auto raw = read_xattrs(top.get());
        bool opaque = raw && overlay_marks(raw.value()).opaque, cut = false;
        auto sub = merged_dir(d, names.value(), i, std::move(top), opaque, &cut, path, opts_.indexes);
        if (sub) n += count_below(sub.value(), path);
    }
    return n;
}

Result<void> Walker::record(Seen& u, Seen& l, const Verdict& v, const std::string& path, bool ignored, uint32_t layer) {
    if (opts_.count_only) {
        (void)note_stats(u, l, path);  // the verdict cache learns them all the same
        ++out_->counted;
        return base::Ok();
    }
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
    c.risk_free_cached = note_stats(u, l, path);
    it.whiteout = v.whiteout_member;
    it.opaque = v.opaque_member;
    it.ino = u.st.stx_ino;
    it.nlink = u.st.stx_nlink;
    bool file = c.type == Type::File;
    out_->items.push_back(std::move(it));
    if (file && v.captured) keep(&u.fd, false);
    if (!opts_.with_base || !v.captured) return base::Ok();
    int64_t copied = copyup_ns(u);
    if (!l.exists) {
        const std::string* gone = opts_.base_stale ? known_gone(u, path) : nullptr;
        // Below a dir copied up from a real dir gone since: the real entry
        // the session had there is gone too (apply's gone_below refuses it).
        Type type = out_->items.back().change.type;
        // (Its content unknown: a placeholder fingerprint, as a record needs one; stale, it never matches.)
        static const std::string unknown = fingerprint_bytes("");
        if (!gone && opts_.base_stale && (in_gone_real_ || u.gone_real) && type != Type::Dir) gone = &unknown;
        add_base(gone ? gone_base(path, type, *gone) : absent_base(path));
        return base::Ok();
    }
    Item& last = out_->items.back();
    bool keep_content = opts_.keep_base_max > 0 && last.change.kind == Kind::Modified &&
                        last.change.type == Type::File && l.side.type == Type::File &&
                        l.side.size <= opts_.keep_base_max;
    TRY(BaseEntry b, base_of(l, path, copied, keep_content ? &last.base_text : nullptr));
    add_base(std::move(b));
    // An original's base: the writer reads it again through this fd rather
    // than opening it by path (docs/performance.md, "Save, round 6").
    if (last.base_text) keep(&l.fd, true);
    if (v.lower_subtree && l.fd.valid()) TRY_VOID(lower_subtree(l.fd.get(), path, copied));
    return base::Ok();
}

void Walker::key_real(const std::string& path, const Seen& l) {
    PathKey k{path, !l.exists, {}};
    if (l.exists) k.key = stat_key(l.st);
    out_->keys.real.push_back(std::move(k));
}

// A dir below an ignored one, keyed for the snapshot as the walk keys its
// own, within kMaxIgnoredKeyBytes of paths; past them, one key no stat
// gives (the snapshot is then never used: the next status walks again).
// The walk's own paths are bounded (kMaxPathBytes), these were not: 3,000
// dirs at an 87 KB path below `--ignore top`, the way out that bound names,
// took `status --ignore top` 780 MB (attack27).
void Walker::key_ignored_dir(const std::string& path, int fd) {
    constexpr uint64_t kMaxIgnoredKeyBytes = uint64_t{32} << 20;
    uint64_t before = counts_->ignored_key_bytes.fetch_add(path.size(), std::memory_order_relaxed);
    if (before + path.size() <= kMaxIgnoredKeyBytes) return key_dir(path, Seen{}, fd);
    if (before > kMaxIgnoredKeyBytes) return;  // the one below is there already
    PathKey k{path.substr(0, path.find('/')), false, {}};
    k.key.ino = ~uint64_t{0};
    k.key.ctime_ns = -1;
    out_->keys.dirs.push_back(std::move(k));
}

void Walker::key_dir(const std::string& path, const Seen& u, int fd) {
    PathKey k{path, false, {}};
    if ((u.st.stx_mask & kKeyMask) == kKeyMask) {
        k.key = stat_key(u.st);
    } else if (!stat_key_at(fd, "", &k.key)) {
        k.absent = true;  // never holds for a dir: the snapshot is not used
    }
    out_->keys.dirs.push_back(std::move(k));
}

// For status's risk marks: the stats a changed file's content is read at
// (none when typed from d_type alone), noted in the verdict cache; true
// when it knows the file to be risk-free at those stats.
bool Walker::note_stats(const Seen& u, const Seen& l, const std::string& path) {
    if (!opts_.verdicts || u.side.type != Type::File || (u.st.stx_mask & kKeyMask) != kKeyMask) return false;
    return opts_.verdicts->note(path, PairKey{stat_key(u.st), l.exists ? stat_key(l.st) : StatKey{}}, &peek_);
}

void Walker::keep(base::Fd* fd, bool base) {
    if (!fd->valid() || counts_->kept >= kMaxKept || room() <= 0) return;  // no room (0 without keep_files)
    Item& it = out_->items.back();
    if (base) {
        it.base_file = std::move(*fd);
    } else {
        it.fd = std::move(*fd);
    }
    ++counts_->kept;
    kept_items_.push_back({out_->items.size() - 1, base});
}

}  // namespace capture
