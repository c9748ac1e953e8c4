#include "review/apply/observe.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "capture/scan/entry/fingerprint.h"
#include "helper/base/dir.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/base/thread.h"
#include "review/apply/conflict.h"

namespace review {
namespace {

base::Result<void> walk_into(int dirfd, const std::string& prefix, std::vector<EntryStat>& out, bool split);

base::Result<void> walk_entry(int dirfd, const struct stat& self, const std::string& prefix, const std::string& n,
                              std::vector<EntryStat>& out, bool split_below = false) {
    struct stat st {};
    if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) return base::Ok();
        return base::sys_error("stat " + prefix + n);
    }
    out.push_back(entry_stat(st, prefix + n));
    if (!S_ISDIR(st.st_mode)) return base::Ok();
    if (st.st_dev != self.st_dev) return base::sys_error(prefix + n, EXDEV);
    TRY(bool other, crosses_mount_at(dirfd, n));  // a bind mount of the same filesystem
    if (other) return base::sys_error(prefix + n, EXDEV);
    int sub = ::openat(dirfd, n.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    // A directory the user may not list (mode 000, 0300) is recorded as an
    // entry only: its content cannot be listed (nor, for mode 000, changed)
    // by the user without a mode change, which the entry itself shows.
    if (sub < 0 && errno == EACCES) return base::Ok();
    if (sub < 0) return base::sys_error("open " + prefix + n);
    base::Fd subfd(sub);
    return walk_into(subfd.get(), prefix + n + "/", out, split_below);
}

// split: the first dir with two or more subdirs is walked by two threads,
// about half its subdirs each (the caller sorts what they found).
base::Result<void> walk_into(int dirfd, const std::string& prefix, std::vector<EntryStat>& out, bool split) {
    auto listed = base::list_dir(dirfd);
    if (!listed) return listed.error().context(prefix.empty() ? "." : prefix);
    struct stat self {};
    if (::fstat(dirfd, &self) != 0) return base::sys_error("stat " + prefix);
    const auto& names = listed.value();
    size_t half = split ? base::split_by_subdirs(names) : 0;
    if (half == 0) {
        // Not split here: below, the split still waits for a dir with two or more subdirs.
        for (const auto& e : names) TRY_VOID(walk_entry(dirfd, self, prefix, e.name, out, split));
        return base::Ok();
    }
    std::vector<EntryStat> theirs;
    base::Result<void> r1 = base::Ok(), r2 = base::Ok();
    base::run_halves(
        [&] {
            for (size_t i = 0; i < half && r1.ok(); i++) r1 = walk_entry(dirfd, self, prefix, names[i].name, out);
            return r1.ok();
        },
        [&] {
            for (size_t i = half; i < names.size() && r2.ok(); i++)
                r2 = walk_entry(dirfd, self, prefix, names[i].name, theirs);
        });
    if (!r1) return r1;
    if (!r2) return r2;
    out.insert(out.end(), std::make_move_iterator(theirs.begin()), std::make_move_iterator(theirs.end()));
    return base::Ok();
}

Observed to_observed(const EntryStat& s) {
    Observed o;
    o.path = s.path;
    o.exists = s.exists;
    o.type = s.type;
    o.mode = s.mode;
    o.size = s.size;
    return o;
}

// Hash lazily: only when type and size leave the question open.
base::Result<void> fill_fingerprint(int dirfd, const std::string& name, const capture::BaseEntry& b, Observed& o) {
    if (!needs_fingerprint(b, o)) return base::Ok();
    if (o.type == capture::Type::Symlink) {
        std::string buf(4096, '\0');
        ssize_t n = ::readlinkat(dirfd, name.c_str(), buf.data(), buf.size());
        if (n < 0) return base::sys_error("readlink " + name);
        buf.resize(static_cast<size_t>(n));
        o.fingerprint = capture::fingerprint_bytes(buf);
        return base::Ok();
    }
    int fd = ::openat(dirfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return base::sys_error("read " + name + " to compare it");
    base::Fd f(fd);
    auto fp = capture::fingerprint_fd(f.get(), o.size);
    if (!fp) return fp.error().context("read " + base::display_path(b.path) + " to compare it");
    o.fingerprint = std::move(fp.value());
    return base::Ok();
}

// A real file its owner may not read (mode 0000) cannot be compared with
// its base: a conflict that names the way out, not an error that ends the apply.
constexpr const char* kUnreadable =
    "cannot be read to compare it with the patch's base (Permission denied): make it readable (chmod u+r) "
    "to check it, or --force to replace it unread";

std::string explain_open(int err) {
    if (err == ELOOP) return "a directory on its path is a symlink on the target (layover never follows symlinks)";
    if (err == EXDEV) return "its path crosses a mount point on the target";
    if (err == ENOENT || err == ENOTDIR) return "its parent directory no longer exists on the target";
    return std::string("cannot open its parent directory: ") + std::strerror(err);
}

}  // namespace

base::Result<std::vector<EntryStat>> walk_tree(int root, const std::string& rel) {
    auto opened = open_dir_beneath(root, rel);
    if (!opened.ok() && opened.error().code == EACCES) {
        // The tree's own root may be one its owner cannot list (an added
        // 0000 dir): recorded without entries, as walk_entry does below.
        auto [parent, name] = split_parent(rel);
        TRY(base::Fd p, open_dir_beneath(root, parent));
        std::vector<EntryStat> none;
        struct stat self {};
        if (::fstat(p.get(), &self) != 0) return base::sys_error("stat " + parent);
        TRY_VOID(walk_entry(p.get(), self, "", name, none));
        if (none.size() == 1 && none[0].type == capture::Type::Dir) return std::vector<EntryStat>{};
        return opened.error();
    }
    TRY(base::Fd d, std::move(opened));
    std::vector<EntryStat> out;
    TRY_VOID(walk_into(d.get(), "", out, ::sysconf(_SC_NPROCESSORS_ONLN) > 1));
    std::sort(out.begin(), out.end(), [](const EntryStat& a, const EntryStat& b) { return a.path < b.path; });
    return out;
}

std::string same_entry(const EntryStat& a, const EntryStat& b) {
    if (a.exists != b.exists) return a.exists ? "was removed meanwhile" : "appeared meanwhile";
    if (!a.exists) return "";
    if (a.type != b.type || a.ino != b.ino) return "was replaced meanwhile";
    if (a.mode != b.mode || a.size != b.size || a.mtime_ns != b.mtime_ns || a.ctime_ns != b.ctime_ns)
        return "was modified meanwhile";
    return "";
}

std::string same_tree(const std::vector<EntryStat>& a, const std::vector<EntryStat>& b) {
    if (a.size() != b.size()) return "its contents changed meanwhile";
    for (size_t i = 0; i < a.size(); i++) {
        if (a[i].path != b[i].path) return "its contents changed meanwhile";
        std::string why = same_entry(a[i], b[i]);
        if (!why.empty()) return base::display_path(a[i].path) + " inside it " + why;
    }
    return "";
}

void hash_deferred(std::vector<DeferredHash>& jobs) {
    for (auto& j : jobs) {
        auto fp = capture::fingerprint_fd(j.fd.get(), j.real.size);
        if (fp.ok()) j.real.fingerprint = fp.value();
        else
            j.result =
                base::Result<void>(fp.error().context("read " + base::display_path(j.real.path) + " to compare it"));
        j.fd.reset();
    }
}

base::Result<void> finish_deferred(std::vector<DeferredHash>& jobs, std::vector<PlanItem>& items) {
    // By path: apply drops no-op items between observe and now.
    std::map<std::string, PlanItem*> by_path;
    for (auto& it : items) by_path[it.unit.path] = &it;
    for (auto& j : jobs) {
        TRY_VOID(j.result);
        std::string why = compare_entry(*j.base, j.real);
        auto it = by_path.find(j.real.path);
        if (!why.empty() && it != by_path.end()) it->second->conflicts.push_back({j.real.path, why});
    }
    jobs.clear();
    return base::Ok();
}

// Base records below `p` that expect an entry: none exists, `p` is absent.
static void gone_below(const std::map<std::string, const capture::BaseEntry*>& base, const std::string& p,
                       PlanItem* it) {
    std::string prefix = p + "/";
    for (auto b = base.lower_bound(prefix); b != base.end() && b->first.compare(0, prefix.size(), prefix) == 0; ++b) {
        if (b->second->absent) continue;
        Observed missing;
        missing.path = b->first;
        it->conflicts.push_back({b->first, compare_entry(*b->second, missing)});
    }
}

base::Result<void> observe(int root, DirCache& dirs, const capture::Manifest& man, std::vector<PlanItem>& items,
                           std::vector<DeferredHash>* defer) {
    std::map<std::string, const capture::BaseEntry*> base;
    for (const auto& b : man.base) base[b.path] = &b;
    for (auto& it : items) {
        const std::string& p = it.unit.path;
        auto [parent, name] = split_parent(p);
        auto dfd = dirs.get(parent);
        if (!dfd.ok()) {
            it.conflicts.push_back({p, explain_open(dfd.error().code)});
            it.hard = true;
            continue;
        }
        TRY(it.before, stat_at(*dfd, name));
        it.before.path = p;
        if (it.before.exists) {
            struct stat st {};
            if (::fstatat(*dfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) it.before_nlink = st.st_nlink;
            if (it.before.type == capture::Type::Other || it.before.type == capture::Type::Socket) {
                // Device nodes and sockets on the target are left alone, even with --force.
                it.conflicts.push_back({p, "is a device or socket on the target; layover never replaces those"});
                it.hard = true;
                continue;
            }
        }
        auto bi = base.find(p);
        if (bi == base.end()) {
            it.conflicts.push_back({p, "the patch has no base record for it (cannot check for conflicts)"});
            continue;
        }
        Observed o = to_observed(it.before);
        if (defer && o.type == capture::Type::File && o.size >= kDeferHashBytes && needs_fingerprint(*bi->second, o)) {
            // Opened now (the path is checked now); read later. The re-check
            // before commit catches a change made in between.
            int fd = ::openat(*dfd, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
            if (fd < 0 && errno == EACCES) {
                it.conflicts.push_back({p, kUnreadable});
                continue;
            }
            if (fd < 0) return base::sys_error("read " + name + " to compare it");
            DeferredHash j;
            j.fd = base::Fd(fd);
            j.base = bi->second;
            j.real = o;
            defer->push_back(std::move(j));
            continue;  // a file: no subtree to compare
        }
        if (auto fp = fill_fingerprint(*dfd, name, *bi->second, o); !fp.ok()) {
            if (fp.error().code != EACCES) return fp.error();
            it.conflicts.push_back({p, kUnreadable});
            continue;
        }
        std::string why = compare_entry(*bi->second, o);
        if (!why.empty()) it.conflicts.push_back({p, why});
        // A tree the patch adds where the target has nothing: a path inside
        // it whose base is a real entry the session knew (gone since, as
        // when its dir was moved away) is a conflict, never brought back.
        if (bi->second->absent && !it.before.exists) gone_below(base, p, &it);
        // A directory that goes away (or is replaced): its whole subtree must match base.
        bool moves_aside = !it.meta_only && it.before.exists && it.before.type == capture::Type::Dir;
        if (!moves_aside) continue;
        auto tree = walk_tree(root, p);
        if (!tree.ok()) {
            it.conflicts.push_back({p, explain_open(tree.error().code)});
            it.hard = true;
            continue;
        }
        it.before_tree = tree.value();
        std::vector<capture::BaseEntry> base_under;
        std::string prefix = p + "/";
        for (auto b = base.lower_bound(prefix); b != base.end() && b->first.compare(0, prefix.size(), prefix) == 0;
             ++b) {
            capture::BaseEntry e = *b->second;
            e.path = e.path.substr(prefix.size());
            base_under.push_back(std::move(e));
        }
        std::map<std::string, const capture::BaseEntry*> under_by_path;
        for (const auto& b : base_under) under_by_path[b.path] = &b;
        std::vector<Observed> real_under;
        for (const auto& e : it.before_tree) {
            Observed ro = to_observed(e);
            auto be = under_by_path.find(e.path);
            if (be != under_by_path.end() && needs_fingerprint(*be->second, ro)) {
                auto [sub_parent, sub_name] = split_parent(p + "/" + e.path);
                TRY(int sfd, dirs.get(sub_parent));
                if (auto fp = fill_fingerprint(sfd, sub_name, *be->second, ro); !fp.ok()) {
                    if (fp.error().code != EACCES) return fp.error();
                    it.conflicts.push_back({p + "/" + e.path, kUnreadable});
                    ro.fingerprint = be->second->fingerprint;  // reported above, not again as modified
                }
            }
            real_under.push_back(std::move(ro));
        }
        for (auto& c : compare_subtree(base_under, real_under)) {
            c.path = p + "/" + c.path;
            it.conflicts.push_back(std::move(c));
        }
    }
    return base::Ok();
}

}  // namespace review
