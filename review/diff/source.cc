#include "review/diff/source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string_view>

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "review/diff/merge3.h"
#include "review/diff/trim.h"

namespace review {

namespace {

bool absent_errno(int e) { return e == ENOENT || e == ENOTDIR || e == ELOOP || e == EXDEV; }

// File and symlink paths in the real subtree at rel (rel itself excluded).
// Child names are gathered and the directory closed before descending, so a
// deep tree costs a bounded number of fds.
base::Result<void> walk_real(int root, const std::string& rel, std::vector<std::string>& out) {
    auto dir = open_dir_beneath(root, rel);
    if (!dir) {
        if (absent_errno(dir.error().code)) return base::Ok();
        return dir.error();
    }
    int dfd = ::fcntl(dir->get(), F_DUPFD_CLOEXEC, 0);
    if (dfd < 0) return base::sys_error("dup");
    DIR* d = ::fdopendir(dfd);
    if (!d) {
        ::close(dfd);
        return base::sys_error("read directory " + base::display_path(rel));
    }
    std::vector<std::string> subdirs;
    errno = 0;
    while (struct dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name == "." || name == "..") continue;
        struct stat st {};
        if (::fstatat(dir->get(), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;  // vanished
        std::string child = rel.empty() ? name : rel + "/" + name;
        if (S_ISDIR(st.st_mode)) subdirs.push_back(child);
        else if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) out.push_back(child);
    }
    int err = errno;
    ::closedir(d);
    if (err) return base::sys_error("read directory " + base::display_path(rel), err);
    for (const auto& s : subdirs) TRY_VOID(walk_real(root, s, out));
    return base::Ok();
}

// Does the real entry still look as the patch's base recorded it? Only what
// the diff read can tell: existence, type, size, and for loaded content the
// fingerprint. Sparse real files read densely may differ in fingerprint; the
// result is only a note for a person, apply decides conflicts itself.
bool matches_base(const capture::BaseEntry& b, const Side& real) {
    if (b.stale) return false;
    if (b.absent) return !real.exists;
    bool is_link = real.exists && real.mode == kGitSymlink;
    if (b.type == capture::Type::Symlink)
        return is_link && (b.fingerprint.empty() || capture::fingerprint_bytes(real.data) == b.fingerprint);
    if (b.type != capture::Type::File) return true;  // dirs and others: nothing read to compare
    if (!real.exists || is_link || real.size != b.size) return false;
    return !real.loaded || real.window || b.fingerprint.empty() ||
           capture::fingerprint_bytes(real.data) == b.fingerprint;
}

// The note for a path whose real entry moved on since the patch's base. A
// modified text file whose original the patch carries is merged by apply
// (review/apply/merge.cc) when its real file kept the base's type and mode
// and no other name of the patch is a hard link to it: then the new side
// becomes the merge, what apply writes (it showed the patch's content, which
// undid the real edits made since), and the note says so; else apply
// reports a conflict (one past the merges' total, `over_budget`, says why),
// and the diff shows the patch's content.
std::string moved_on_note(const capture::Patch& patch, const capture::BaseEntry& b, const capture::Member* m,
                          bool linked, bool over_budget, FileDiff& f, bool* merged_out) {
    std::string note = base::display_path(f.path) +
                       " changed on the real filesystem since the session's base was recorded; the diff shows ";
    const Side& real = f.old_side;
    Side& mine = f.new_side;
    const std::string* orig = b.stale || b.type != capture::Type::File ? nullptr : patch.original(b.fingerprint);
    bool mergeable = orig && !over_budget && m && m->kind == capture::Member::Kind::File && !linked && real.exists &&
                     real.loaded && !real.window && real.mode != kGitSymlink && real.perm == (b.mode & 07777) &&
                     mine.loaded && !looks_binary(real.data) && !looks_binary(mine.data);
    if (mergeable) {
        MergeResult merged = merge3(*orig, real.data, mine.data);
        if (merged.conflicts.empty()) {
            mine.data = std::move(merged.text);
            mine.size = mine.data.size();
            *merged_out = true;
            return note +
                   "what apply will write: the patch's changes merged into its current content (they do not "
                   "overlap)";
        }
    }
    if (orig && over_budget)
        return note + "its current content, and apply will report a conflict (" + over_merge_budget(f.path) + ")";
    return note + "its current content, and apply will report a conflict";
}

// A big file changed on both sides: its real file, open, and the trim of it.
struct Big {
    base::Fd fd;
    uint64_t old_size = 0;
    uint32_t old_mode = 0;
    std::unique_ptr<Trim> trim;
    std::optional<TrimWindow> window;
    std::string new_data;
};

// The real regular file at rel, open (invalid when it is not one).
base::Fd open_real_file(int root, const std::string& rel, struct stat* st) {
    auto fd = open_beneath(root, rel, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
    if (!fd || ::fstat(fd->get(), st) != 0 || !S_ISREG(st->st_mode)) return base::Fd();
    return std::move(fd.value());
}

// A file held whole for a merge that does not happen (the merge overlaps, or
// the original is a hostile patch's stand-in), over `hold` on both sides:
// shown by its window, as one without an original is (a 64 MiB pair diffed
// whole took ~0.9 GB and printed the whole file twice).
base::Result<void> window_of_whole(int root, FileDiff& f, uint64_t hold) {
    Side& o = f.old_side;
    Side& n = f.new_side;
    if (!o.loaded || !n.loaded || o.window || o.mode == kGitSymlink || n.mode == kGitSymlink || o.size <= hold ||
        n.size <= hold)
        return base::Ok();
    struct stat st {};
    base::Fd fd = open_real_file(root, f.path, &st);
    if (!fd.valid() || static_cast<uint64_t>(st.st_size) != o.data.size()) return base::Ok();
    Trim t(fd.get(), o.data.size(), n.data.size());
    TRY_VOID(t.feed(0, n.data.data(), n.data.size()));
    TRY(auto w, t.finish(3, hold));
    o.window = n.window = true;
    bool shown = w && !w->identical && !w->binary;
    o.loaded = n.loaded = shown || (w && w->identical);
    if (!shown) {
        o.data = std::string();
        n.data = std::string();
        return base::Ok();
    }
    o.data = o.data.substr(static_cast<size_t>(w->start), static_cast<size_t>(w->old_end - w->start));
    n.data = n.data.substr(static_cast<size_t>(w->start), static_cast<size_t>(w->new_end - w->start));
    o.first_line = n.first_line = w->first_line;
    return base::Ok();
}

base::Result<std::string> pread_range(int fd, uint64_t from, uint64_t to) {
    std::string out(static_cast<size_t>(to - from), '\0');
    size_t got = 0;
    while (got < out.size()) {
        ssize_t n = ::pread(fd, out.data() + got, out.size() - got, static_cast<off_t>(from + got));
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return base::sys_error("read");
        if (n == 0) break;
        got += static_cast<size_t>(n);
    }
    out.resize(got);
    return out;
}

}  // namespace

bool in_scope(const std::vector<std::string>& scope, const std::string& path) {
    if (scope.empty()) return true;
    for (const auto& s : scope) {
        if (s.empty() || path == s) return true;
        if (path.size() > s.size() && path.compare(0, s.size(), s) == 0 && path[s.size()] == '/') return true;
    }
    return false;
}

base::Result<DiffSet> collect_diffs(const capture::Patch& patch, const DiffScope& scope) {
    const auto& man = patch.manifest();
    DiffSet out;
    int rfd = scope.old_root >= 0 ? ::fcntl(scope.old_root, F_DUPFD_CLOEXEC, 0)
                                  : ::open(man.target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rfd < 0) {
        int err = errno;
        return base::Error{"cannot open the target " + base::display_path(man.target) + ": " + std::strerror(err) +
                               "; the diff compares against it (a patch file's tree elsewhere: pass --target DIR)",
                           err};
    }
    base::Fd root(rfd);

    std::map<std::string, const capture::Member*> members;
    for (const auto& m : patch.members()) members[m.path] = &m;
    auto file_like = [](const capture::Member* m) {
        return m && (m->kind == capture::Member::Kind::File || m->kind == capture::Member::Kind::Symlink ||
                     m->kind == capture::Member::Kind::Hardlink);
    };

    // Paths with a file-level diff: every file-like member, every replaced
    // or deleted file, and everything in a real dir the patch removes.
    std::set<std::string> paths;
    base::PathFilter filter(scope.paths, scope.exclude);
    bool globs = false;
    for (const auto& s : scope.paths) globs = globs || base::has_glob_chars(s);
    for (const auto& m : patch.members())
        if (file_like(&m) && filter.selects(m.path)) paths.insert(m.path);
    size_t unshown = 0;
    for (const auto& c : man.changes) {
        bool selected = filter.selects(c.path);
        // A filter path (or, for a glob, maybe a match) lies inside this change's dir.
        bool encloses = globs || filter.selects_strictly_beneath(c.path);
        if (!selected && !encloses) continue;
        if (selected) out.changes++;
        using capture::Kind;
        using capture::Type;
        bool old_filelike = c.old_type == Type::File || c.old_type == Type::Symlink;
        bool new_filelike = c.type == Type::File || c.type == Type::Symlink;
        if (selected && old_filelike && c.kind != Kind::Added) paths.insert(c.path);
        if (c.old_type == Type::Dir &&
            (c.kind == Kind::Deleted || c.kind == Kind::TypeChanged || c.kind == Kind::OpaqueDir)) {
            std::vector<std::string> found;
            TRY_VOID(walk_real(root.get(), c.path, found));
            for (auto& f : found)
                if (filter.selects(f)) paths.insert(std::move(f));
        }
        if (selected && !new_filelike && !old_filelike && c.type != Type::Dir && c.old_type != Type::Dir) unshown++;
    }
    if (unshown)
        out.notes.push_back(std::to_string(unshown) +
                            " change(s) (fifos, sockets) have no diff form; 'layover status' lists them");

    // New contents: one pass over the payload for the members needed. A big
    // file over a big real file is compared as it streams by instead, and
    // only its differing window read in a second pass.
    std::map<std::string, const capture::BaseEntry*> bases;
    for (const auto& b : man.base) bases[b.path] = &b;
    // A file whose base's original the patch carries (its real file moved
    // on: apply 3-way merges it up to kMaxMerge) is held whole, as apply
    // holds it, so its note and diff are the merge apply writes.
    auto merges = [&](const std::string& p) {
        auto b = bases.find(p);
        return b != bases.end() && !b->second->stale && b->second->type == capture::Type::File &&
               patch.original(b->second->fingerprint);
    };
    // The merges held together stay within kMaxMergeTotal, counted as apply
    // counts them (review/apply/merge.cc); one past it is not held whole.
    std::set<std::string> over;
    MergeBudget budget;
    for (const auto& p : paths) {
        auto it = members.find(p);
        if (it == members.end() || it->second->kind != capture::Member::Kind::File || !merges(p)) continue;
        struct stat st {};
        base::Fd fd = open_real_file(root.get(), p, &st);
        uint64_t real_size = static_cast<uint64_t>(st.st_size), new_size = it->second->size;
        if (fd.valid() && real_size <= kMaxMerge && new_size <= kMaxMerge && !budget.take(real_size, new_size))
            over.insert(p);
    }
    std::map<std::string, std::string> content;
    std::map<std::string, Big> bigs;
    std::set<std::string> want, want_linked;
    for (const auto& p : paths) {
        auto it = members.find(p);
        if (it == members.end()) continue;
        const capture::Member* m = it->second;
        if (m->kind == capture::Member::Kind::Hardlink) {
            want.insert(m->link_target);
            want_linked.insert(m->link_target);
        } else if (m->kind == capture::Member::Kind::File) {
            struct stat st {};
            base::Fd fd;
            // Over max_load on either side: reported as differing, unread, as before.
            if (m->size > scope.hold && m->size <= scope.max_load && (!merges(p) || over.count(p)))
                fd = open_real_file(root.get(), p, &st);
            uint64_t real_size = static_cast<uint64_t>(st.st_size);
            if (fd.valid() && real_size > scope.hold && real_size <= scope.max_load) {
                Big& b = bigs[p];
                b.old_size = static_cast<uint64_t>(st.st_size);
                b.old_mode = git_file_mode(st.st_mode);
                b.trim = std::make_unique<Trim>(fd.get(), b.old_size, m->size);
                b.fd = std::move(fd);
            } else {
                want.insert(p);
            }
        }
    }
    for (const auto& [p, b] : bigs) want.erase(p);
    if (!want.empty() || !bigs.empty()) {
        TRY_VOID(patch.read_data([&](const capture::Member& m) -> capture::DataSink {
            if (auto big = bigs.find(m.path); big != bigs.end()) {
                Trim* t = big->second.trim.get();
                return [t](uint64_t offset, const char* data, size_t len) { return t->feed(offset, data, len); };
            }
            if (!want.count(m.path) || m.size > scope.max_load) return nullptr;
            std::string* buf = &content[m.path];
            buf->reserve(static_cast<size_t>(m.size));
            return [buf](uint64_t offset, const char* data, size_t len) -> base::Result<void> {
                if (offset > buf->size()) buf->resize(offset, '\0');  // a hole
                buf->replace(offset, std::min<uint64_t>(len, buf->size() - offset), data, len);
                return base::Ok();
            };
        }));
    }
    bool second_pass = false;
    for (auto& [p, b] : bigs) {
        TRY(b.window, b.trim->finish(3, scope.hold));
        second_pass = second_pass || (b.window && !b.window->identical && !b.window->binary);
    }
    if (second_pass) {
        TRY_VOID(patch.read_data([&](const capture::Member& m) -> capture::DataSink {
            auto big = bigs.find(m.path);
            if (big == bigs.end() || !big->second.window || big->second.window->identical) return nullptr;
            Big* b = &big->second;
            uint64_t from = b->window->start, to = b->window->new_end;
            b->new_data.reserve(static_cast<size_t>(to - from));
            return [b, from, to](uint64_t offset, const char* data, size_t len) -> base::Result<void> {
                uint64_t lo = std::max(offset, from), hi = std::min<uint64_t>(offset + len, to);
                if (lo < hi) b->new_data.append(data + (lo - offset), static_cast<size_t>(hi - lo));
                return base::Ok();
            };
        }));
    }

    std::set<std::string_view> linked;  // files the patch also adds under another name: apply merges none
    for (const auto& m : patch.members())
        if (m.kind == capture::Member::Kind::Hardlink) linked.insert(m.link_target);
    for (const auto& p : paths) {
        FileDiff f;
        f.path = p;
        auto it = members.find(p);
        const capture::Member* m = it == members.end() ? nullptr : it->second;
        if (auto big = bigs.find(p); big != bigs.end()) {
            Big& b = big->second;
            if (b.window && b.window->identical && b.old_mode == git_file_mode(m->mode)) continue;
            Side& o = f.old_side;
            Side& n = f.new_side;
            o.exists = n.exists = true;
            o.mode = b.old_mode;
            n.mode = git_file_mode(m->mode);
            o.size = b.old_size;
            n.size = m->size;
            bool shown = b.window && !b.window->identical && !b.window->binary;
            o.loaded = n.loaded = shown || (b.window && b.window->identical);
            o.window = n.window = true;
            if (shown) {
                TRY(o.data, pread_range(b.fd.get(), b.window->start, b.window->old_end));
                n.data = std::move(b.new_data);
                o.first_line = n.first_line = b.window->first_line;
            }
            b.fd.reset();
            auto base_it = bases.find(p);
            if (base_it != bases.end() && !matches_base(*base_it->second, o))
                out.notes.push_back(base::display_path(p) +
                                    " changed on the real filesystem since the session's base was recorded; the diff "
                                    "shows its current content, and apply will report a conflict" +
                                    (over.count(p) ? " (" + over_merge_budget(p) + ")" : std::string()));
            out.files.push_back(std::move(f));
            continue;
        }
        TRY(f.old_side, read_real_side(root.get(), p, scope.max_load));
        if (file_like(m)) {
            Side& n = f.new_side;
            n.exists = true;
            if (m->kind == capture::Member::Kind::Symlink) {
                n.mode = kGitSymlink;
                n.data = m->link_target;
                n.size = n.data.size();
            } else {
                const capture::Member* src = m;
                if (m->kind == capture::Member::Kind::Hardlink) {
                    auto t = members.find(m->link_target);
                    if (t != members.end()) src = t->second;
                }
                n.mode = git_file_mode(m->mode);
                n.size = src->size;
                auto c = content.find(src->path);
                if (c == content.end() && src->size > 0) {
                    n.loaded = false;
                } else if (c != content.end()) {
                    // Moved, not copied, unless a hard link shares it.
                    if (want_linked.count(src->path)) n.data = c->second;
                    else n.data = std::move(c->second);
                    if (n.data.size() < n.size) n.data.resize(n.size, '\0');  // trailing hole
                }
            }
        }
        auto b = bases.find(p);
        if (b != bases.end() && !matches_base(*b->second, f.old_side)) {
            bool merged = false;
            out.notes.push_back(
                moved_on_note(patch, *b->second, m, linked.count(p) > 0, over.count(p) > 0, f, &merged));
            if (!merged) TRY_VOID(window_of_whole(root.get(), f, scope.hold));
        }
        if (f.old_side.exists || f.new_side.exists) out.files.push_back(std::move(f));
    }
    return out;
}

}  // namespace review
