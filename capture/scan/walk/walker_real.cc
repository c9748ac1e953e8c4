// The real side of the walk (capture/scan/walk/walker.h): real entries a hiding
// or deleted dir takes away, and, for save, the base each change must find.
#include <fcntl.h>
#include <sys/stat.h>

#include "capture/scan/entry/dir_print.h"
#include "capture/scan/entry/fingerprint.h"
#include "capture/scan/walk/walker.h"
#include "helper/base/text.h"

namespace capture {

using base::Result;

// A real entry that a hiding dir lacks: deleted, as a whiteout there
// would have deleted it. Its layer (the writer finds the parent dir
// there; blame's step) is the lowest the merged dir reaches: the one
// that cut it off from the real tree.
Result<void> Walker::gone_entry(const Here& h, const std::string& name) {
    return gone_at(h.low, h.prefix, name, h.hide->since, h.up.ids.back());
}

// Is a hidden path strictly beneath `path`? A real dir holding one (made
// there after the run, when nothing covered it) is never deleted whole.
bool Walker::hidden_beneath(const std::string& path) const {
    for (const auto& x : excluded_)
        if (x.size() > path.size() + 1 && x[path.size()] == '/' && x.compare(0, path.size(), path) == 0) return true;
    return false;
}

// A real dir the upper deleted (or lacks) that holds a hidden path: it
// stays, and each real entry in it is deleted in its place, the hidden
// ones never (a deletion of the dir would take the hidden path with it).
Result<void> Walker::gone_around_hidden(int low, const std::string& prefix, int64_t since, uint32_t layer) {
    Level level(this);
    TRY(auto names, list_real_dir(low, base::display_path(prefix)));
    for (const auto& e : names) TRY_VOID(gone_at(low, prefix, e.name, since, layer));
    return base::Ok();
}

Result<void> Walker::gone_at(int low, const std::string& prefix, const std::string& name, int64_t since,
                             uint32_t layer) {
    std::string path = join_path(prefix, name);
    if (!excluded_.empty() && excluded_.count(path)) return base::Ok();  // a hidden path: never captured
    TRY(Seen l, look(low, name, path, false, !opts_.with_base));
    if (opts_.record_keys) key_real(path, l);
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

int64_t Walker::copyup_ns(const Seen& u) const {
    if (u.first_ns >= 0) return u.first_ns;
    if (u.st.stx_mask & STATX_BTIME) return ns_of(u.st.stx_btime);
    return opts_.session_start_ns;
}

Result<BaseEntry> Walker::base_of(const Seen& l, const std::string& path, int64_t copied, bool* text) {
    BaseEntry b;
    b.path = path;
    b.type = l.side.type;
    b.mode = l.side.mode;
    b.size = l.side.size;
    if (l.side.type == Type::File) {
        auto fp = fingerprint_fd(l.fd.get(), l.side.size, text);
        if (!fp) return fp.error().context("reading real file " + base::display_path(path));
        b.fingerprint = std::move(fp.value());
    } else if (l.side.type == Type::Symlink) {
        b.fingerprint = fingerprint_bytes(l.side.link_target);
    }
    // A dir: its subtree's (capture/scan/entry/dir_print.h), read only when its ctime says stale and an apply
    // remembered one for it.
    b.stale = opts_.base_stale && stale_copy(path, ns_of(l.st.stx_ctime), copied, b.mode, opts_.known_bases, [&] {
                  return b.type == Type::Dir ? real_subtree_fingerprint(l.fd.get()) : b.fingerprint;
              });
    return b;
}

void Walker::mark_stale(const Seen& u, const Seen& l, int low, const std::string& name, const std::string& path) {
    Change& c = out_->items.back().change;
    c.stale = stale_copy(path, ns_of(l.st.stx_ctime), copyup_ns(u), l.side.mode, opts_.known_bases, [&] {
        if (l.side.type == Type::Symlink) return fingerprint_bytes(l.side.link_target);
        base::Fd own;
        if (l.side.type == Type::Dir) {
            if (!l.fd.valid()) own.reset(::openat(low, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            return real_subtree_fingerprint(l.fd.valid() ? l.fd.get() : own.get());
        }
        if (l.side.type != Type::File) return std::string();
        if (!l.fd.valid()) own.reset(::openat(low, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
        auto fp = fingerprint_fd(l.fd.valid() ? l.fd.get() : own.get(), l.side.size);
        return fp ? fp.value() : std::string();
    });
}

void Walker::note_fresh(const Seen& u, const Seen& l, int low, const std::string& name, const std::string& path) {
    constexpr uint64_t kFileMax = uint64_t{16} << 20, kBudget = uint64_t{256} << 20;
    if (ns_of(l.st.stx_ctime) > copyup_ns(u)) return;  // changed since: stale, nothing to vouch for
    std::string fp;
    if (l.side.type == Type::Symlink && !l.side.link_target.empty()) {
        fp = fingerprint_bytes(l.side.link_target);
    } else if (l.side.type == Type::File && l.side.size <= kFileMax && fresh_bytes_ + l.side.size <= kBudget) {
        base::Fd own;
        int fd = l.fd.get();
        if (!l.fd.valid()) {
            // The file the walk stat'ed, or nothing.
            own.reset(::openat(low, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
            struct stat st;
            if (!own.valid() || ::fstat(own.get(), &st) != 0 || st.st_ino != l.st.stx_ino) return;
            fd = own.get();
        }
        auto got = fingerprint_fd(fd, l.side.size);
        // Changed while read (a write in between moves its ctime): what was
        // read is not what was copied up, and must vouch for nothing.
        struct stat after;
        if (!got || ::fstat(fd, &after) != 0 ||
            ns_of(l.st.stx_ctime) != base::time_ns(after.st_ctim.tv_sec, after.st_ctim.tv_nsec))
            return;
        fp = std::move(got.value());
        fresh_bytes_ += l.side.size;
    } else {
        return;
    }
    out_->fresh.emplace_back(path, session::known_content(fp, l.side.mode));
}

// Paths are unique except where a real subtree record (added first, when
// its dir is recorded) meets an upper entry's absent record below an
// opaque dir: only subtree paths need remembering.
void Walker::add_base(BaseEntry b, bool subtree) {
    if (subtree) {
        if (!seen_base_.insert(b.path).second) return;
    } else if (!seen_base_.empty() && seen_base_.count(b.path)) {
        return;
    }
    out_->base.push_back(std::move(b));
}

// Every entry below a deleted or replaced real dir, so apply notices an
// edit deep inside.
Result<void> Walker::lower_subtree(int low, const std::string& prefix, int64_t copied) {
    Level level(this);
    TRY(auto names, list_real_dir(low, base::display_path(prefix)));
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

}  // namespace capture
