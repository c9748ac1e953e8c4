#include "overlay/mask.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "overlay/mountinfo.h"
#include "overlay/tmpfs.h"

namespace overlay {

namespace {

const char kWhat[] = "a tmpfs to keep missing hidden paths missing";

// "a/../b": a path the plan could not resolve (it does not exist) and that
// must not be followed up out of the root.
bool has_dot_dot(const std::string& p) {
    size_t i = 0;
    while ((i = p.find("..", i)) != std::string::npos) {
        if ((i == 0 || p[i - 1] == '/') && (i + 2 == p.size() || p[i + 2] == '/')) return true;
        i += 2;
    }
    return false;
}

// What the real tree holds at a prefix of a missing path.
enum class Real { Dir, Missing, Other };

// The user.* xattrs of the real dir `p` below `real` (name, value): the
// mask's dir, which overlayfs copies up when the command writes below it,
// must carry them, or capture sees them removed and an apply removes them
// from the real dir. Empty when it has none or they cannot be read.
std::vector<std::pair<std::string, std::string>> user_xattrs(int real, const std::string& p) {
    std::vector<std::pair<std::string, std::string>> out;
    base::Fd d(::openat(real, p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    char names[4096];
    ssize_t n = d.valid() ? ::flistxattr(d.get(), names, sizeof names) : -1;
    for (ssize_t i = 0; i < n; i += static_cast<ssize_t>(std::strlen(names + i)) + 1) {
        // Not user.overlay.*: on a layer overlayfs reads them as its own
        // marks (an opaque mask dir would hide the whole real one).
        if (std::strncmp(names + i, "user.", 5) != 0 || std::strncmp(names + i, "user.overlay.", 13) == 0) continue;
        char value[4096];
        ssize_t v = ::fgetxattr(d.get(), names + i, value, sizeof value);
        if (v >= 0) out.emplace_back(names + i, std::string(value, static_cast<size_t>(v)));
    }
    return out;
}

base::Result<base::Fd> build(int real, const std::vector<std::string>& rels, bool xattrs_ok, bool* no_xattrs);

}  // namespace

base::Result<base::Fd> build_mask(int real, const std::vector<std::string>& rels) {
    // A tmpfs without user xattrs (Linux before 6.6): a dir that has some is
    // left to the real tree (no whiteout below it), as another user's is.
    bool no_xattrs = false;
    auto m = build(real, rels, true, &no_xattrs);
    if (!m && no_xattrs) return build(real, rels, false, &no_xattrs);
    return m;
}

namespace {

base::Result<base::Fd> build(int real, const std::vector<std::string>& rels, bool xattrs_ok, bool* no_xattrs) {
    if (rels.empty()) return base::Fd();
    std::map<std::string, Real> seen;         // prefix -> what the real tree has there
    std::map<std::string, struct stat> dirs;  // the mask's dirs, as the real ones are
    std::map<std::string, std::vector<std::pair<std::string, std::string>>> xattrs;  // and their user.* xattrs
    std::vector<std::string> whiteouts;
    uid_t self = ::geteuid();
    for (const auto& rel : rels) {
        if (rel.empty() || rel[0] == '/') continue;
        for (size_t end = rel.find('/');; end = rel.find('/', end + 1)) {
            std::string p = rel.substr(0, end);
            auto it = seen.find(p);
            if (it == seen.end()) {
                struct stat st;
                Real r = Real::Other;
                if (::fstatat(real, p.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
                    // A dir of another user: the mask's would show as ours.
                    if (S_ISDIR(st.st_mode) && st.st_uid == self) {
                        auto x = user_xattrs(real, p);
                        if (x.empty() || xattrs_ok) {
                            r = Real::Dir;
                            dirs.emplace(p, st);
                            if (!x.empty()) xattrs.emplace(p, std::move(x));
                        }
                    }
                } else if (errno == ENOENT) {
                    r = Real::Missing;
                }
                it = seen.emplace(p, r).first;
            }
            // The plan found each path missing: a leaf there now was made
            // on the host since (a few ms): whited out too, never shown.
            struct stat now;
            bool late = end == std::string::npos && it->second != Real::Missing &&
                        ::fstatat(real, p.c_str(), &now, AT_SYMLINK_NOFOLLOW) == 0;
            if (it->second == Real::Missing || late) {
                if (std::find(whiteouts.begin(), whiteouts.end(), p) == whiteouts.end()) whiteouts.push_back(p);
                break;
            }
            if (it->second == Real::Other || end == std::string::npos) break;  // nothing to mask below
        }
    }
    // A whiteout below another (a late leaf above a missing path) is moot.
    auto below = [](const std::string& w, const std::string& p) {
        return w.size() > p.size() && w[p.size()] == '/' && w.compare(0, p.size(), p) == 0;
    };
    std::vector<std::string> kept;
    for (const auto& w : whiteouts)
        if (std::none_of(whiteouts.begin(), whiteouts.end(), [&](const std::string& o) { return below(w, o); }))
            kept.push_back(w);
    whiteouts = std::move(kept);
    if (whiteouts.empty()) return base::Fd();
    TRY(base::Fd m, detached_tmpfs("64k", dirs.size() + whiteouts.size() + 16, kWhat));
    // Parents first (the map's order puts "a" before "a/b").
    for (const auto& [p, st] : dirs) {
        bool needed =
            std::any_of(whiteouts.begin(), whiteouts.end(), [&](const std::string& w) { return below(w, p); });
        if (needed && ::mkdirat(m.get(), p.c_str(), 0700) != 0 && errno != EEXIST)
            return base::sys_error("masking a missing hidden path below " + p);
    }
    // One whiteout, and the others hard links to it, as overlayfs shares its
    // own: a link costs no new inode (~4 us a name here against ~6).
    for (size_t i = 0; i < whiteouts.size(); i++) {
        const char* w = whiteouts[i].c_str();
        if (i == 0 ? ::mknodat(m.get(), w, S_IFCHR | 0000, ::makedev(0, 0)) != 0
                   : ::linkat(m.get(), whiteouts[0].c_str(), m.get(), w, 0) != 0)
            return base::sys_error("masking the missing hidden path " + whiteouts[i]);
    }
    // Then each dir as the real one is (mode, times): where no layer of the
    // session has the dir, the mask's is the one the command sees. Deepest
    // first, so setting a child's times leaves its parent's alone.
    for (auto it = dirs.rbegin(); it != dirs.rend(); ++it) {
        const auto& [p, st] = *it;
        struct stat made;
        if (::fstatat(m.get(), p.c_str(), &made, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(made.st_mode))
            continue;  // not needed, or a late leaf's whiteout
        auto x = xattrs.find(p);
        if (x != xattrs.end()) {
            base::Fd d(::openat(m.get(), p.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
            for (const auto& [name, value] : x->second)
                if (!d.valid() || ::fsetxattr(d.get(), name.c_str(), value.data(), value.size(), 0) != 0) {
                    *no_xattrs = errno == EOPNOTSUPP;
                    return base::sys_error("masking a missing hidden path below " + p);
                }
        }
        struct timespec times[2] = {st.st_atim, st.st_mtim};
        if (::fchmodat(m.get(), p.c_str(), st.st_mode & 07777, 0) != 0 ||
            ::utimensat(m.get(), p.c_str(), times, AT_SYMLINK_NOFOLLOW) != 0)
            return base::sys_error("masking a missing hidden path below " + p);
    }
    TRY_VOID(make_read_only(m, kWhat));
    return m;
}

}  // namespace

std::vector<std::string> mask_rels(const std::string& root, const std::vector<std::string>& roots,
                                   const std::vector<std::string>& missing) {
    std::vector<std::string> out;
    for (const auto& p : missing) {
        if (p == root || !path_within(p, root) || has_dot_dot(p)) continue;
        bool deeper = std::any_of(roots.begin(), roots.end(), [&](const std::string& r) {
            return r != root && r.size() > root.size() && path_within(r, root) && path_within(p, r);
        });
        if (!deeper) out.push_back(root == "/" ? p.substr(1) : p.substr(root.size() + 1));
    }
    return out;
}

}  // namespace overlay
