// What a stale copy is judged against (capture/scan/walk/walker.h): when the
// session first had a path, and a real entry gone since the session knew it.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "capture/scan/walk/walker.h"
#include "helper/base/fd.h"

namespace capture {

namespace {

// overlayfs marks a file it copied up (mounted with userxattr, as the
// sandbox's overlays are); one made anew, or renamed over the copy, is not
// marked, and the sandboxed program cannot set the mark (overlayfs refuses
// its own xattrs to writers through the overlay).
constexpr const char* kOrigin = "user.overlay.origin";

// The lowest layer holding the listing's name `index`: its index in the
// stack, and the name to use on stack.fds[that] (buf may hold it).
size_t lowest_holder(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name,
                     std::string* buf, const std::string** in_it) {
    size_t k = ls.holders.empty() ? 0 : ls.holders[index].back().layer;
    *in_it = &stack.name_in(k, name, buf);
    return k;
}

}  // namespace

// Most paths end at the first test: the real entry is stale already by the
// upper entry's birth, or unchanged since the session began. Only a real
// entry changed in between costs a look at the layers.
//
// A deletion counts the same way: a whiteout over a real file (the program
// may have deleted its own copy, made before the user's edit, or a file a
// lower layer held). A whiteout or an opaque dir over a real dir: the
// dir's ctime does not tell a file edited in it, so the dir counts from
// when the session first had it whatever it says, and so does all it hid
// (Hiding::since, lower_subtree). An entry inside such a hiding dir was
// the session's since then too: the lower layers' copies are cut off from
// its own holders.
void Walker::settle_first_copy(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name,
                               const std::string& path, Seen* u, const Seen& l, const Hiding* parent_hide) const {
    // (No session start known, as for a bare pair of trees: births only.)
    if (!l.exists || opts_.session_start_ns <= 0) return;
    Type t = u->side.type;
    if ((t == Type::Whiteout || t == Type::OpaqueDir) && l.side.type == Type::Dir) {
        u->first_ns = std::min(copyup_ns(*u), first_copy(stack, ls, index, name, path, -1));
        return;
    }
    // A dir made where the real tree has a file (`rm f && mkdir f`): made
    // anew, after the session dropped its view of the file.
    bool dir_over_file = (t == Type::Dir || t == Type::OpaqueDir) && l.side.type != Type::Dir;
    if (t != Type::File && t != Type::Symlink && t != Type::Whiteout && !dir_over_file) return;
    int64_t born = copyup_ns(*u), real = ns_of(l.st.stx_ctime);
    if (real > born || real <= opts_.session_start_ns) return;
    int64_t real_born = (l.st.stx_mask & STATX_BTIME) ? ns_of(l.st.stx_btime) : -1;
    int64_t first = std::min(born, first_copy(stack, ls, index, name, path, real_born));
    if (parent_hide && parent_hide->since > 0) first = std::min(first, parent_hide->since);
    // A copy the command renamed another file over (sed -i, mv a b), gone
    // from the layers, noted by the supervisor as it let the rename run.
    int64_t noted = opts_.first_copies ? opts_.first_copies->get(path) : -1;
    u->first_ns = noted >= 0 ? std::min(first, noted) : first;
}

// The lowest layer holding the name had it first: every holder above was
// made from the view it gave. Its entry copied up in place (marked, one
// link, from a real file there since the layer began): its birth, when the
// real file was read. Anything else was made
// anew there, from whatever the program had read since that layer began
// (the run, or checkpoint, that made it): that start. A marked file with other links was linked
// there from another path (`ln a b` copies `a` up, marked): it carries
// `a`'s mark and birth, not `b`'s; so does one at a name a rename or a
// link made, whatever its links now. A whiteout: the program may have
// deleted a copy the layer held (edited, then `rm`), whose birth went with
// it: the layer's start, as for a file made anew.
int64_t Walker::first_copy(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name,
                           const std::string& path, int64_t real_born) const {
    std::string buf;
    const std::string* in_it = nullptr;
    size_t k = lowest_holder(stack, ls, index, name, &buf, &in_it);
    const std::string& n = *in_it;
    int64_t start = opts_.layer_start ? opts_.layer_start(stack.ids[k]) : opts_.session_start_ns;
    // (Never before the session began: a start floored to its second may be.)
    start = std::max(start, opts_.session_start_ns);
    // A name a rename or a link made (noted by the supervisor): the file
    // there, marked or not, is another path's copy (`rm b && ln a b && rm a`);
    // with the notes full, any may be.
    const session::FirstCopiesOnce* notes = opts_.first_copies;
    if (notes && (notes->full() || notes->moved_under(path))) return start;
    // A real file born since the layer began (the host saved it by a rename,
    // as editors do, or made it anew): overlayfs keeps what it looked up of
    // a local lower layer, and may have copied up the file the path had
    // before (`cat f` in the run, the host's save, then `echo >> f`).
    if (real_born > start) return start;
    struct statx st {};
    if (::statx(stack.fds[k], n.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_BTIME | STATX_NLINK, &st) != 0 ||
        !(st.stx_mask & STATX_BTIME) || !S_ISREG(st.stx_mode) || st.stx_nlink != 1)
        return start;
    int64_t born = ns_of(st.stx_btime);
    base::Fd fd(::openat(stack.fds[k], n.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    struct statx again {};
    // The entry stat'ed, and marked: copied up at its birth.
    if (fd.valid() && ::statx(fd.get(), "", AT_EMPTY_PATH, STATX_BTIME | STATX_NLINK, &again) == 0 &&
        ns_of(again.stx_btime) == born && again.stx_nlink == 1 && ::fgetxattr(fd.get(), kOrigin, nullptr, 0) >= 0)
        return born;
    return start;
}

// overlayfs marks a dir it copies up too, and cannot rename a merged dir
// (no redirect_dir with userxattr: `mv` copies it whole, as new unmarked
// dirs). So where the real tree has no dir at a path, a marked dir in the
// lowest layer holding it was copied from the real dir the path had: the
// user deleted or moved that dir since (while the command ran, as no
// known content records), and the session's dir and all it holds would
// bring it back. A squash's merged layer makes its dirs anew, unmarked:
// past one, such a dir is an addition again.
bool Walker::copied_from_real(const UpperDir& stack, const UpperListing& ls, size_t index,
                              const std::string& name) const {
    std::string buf;
    const std::string* n = nullptr;
    size_t k = lowest_holder(stack, ls, index, name, &buf, &n);
    base::Fd fd(::openat(stack.fds[k], n->c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    return fd.valid() && ::fgetxattr(fd.get(), kOrigin, nullptr, 0) >= 0;
}

// The same for a file, which overlayfs can rename (`mv a b` carries `a`'s
// mark to `b`): from when the supervisor began noting every name the
// command's renames and links made (helper/store/session/first_copies.h), a marked
// file in the lowest layer holding the path, born since, at a name none of
// them made (nor a dir above it), was copied up at this path, from the real
// file the path had: the user deleted or moved that file since, while the
// command ran (a run's exit would have known its content).
bool Walker::file_copied_from_real(const UpperDir& stack, const UpperListing& ls, size_t index, const std::string& name,
                                   const std::string& path, const Seen& u) const {
    const session::FirstCopiesOnce* notes = opts_.first_copies;
    int64_t since = notes ? notes->moves_since() : -1;
    if (since < 0 || real_dir_ns < since || notes->moved_under(path)) return false;
    std::string buf;
    const std::string* n = nullptr;
    size_t k = lowest_holder(stack, ls, index, name, &buf, &n);
    // The entry itself (one layer holds it, the usual case): its stat, and
    // its fd when the walk opened it, serve.
    bool own = k == ls.holder(index);
    if (own && (u.st.stx_mask & STATX_BTIME) && ns_of(u.st.stx_btime) < since) return false;
    base::Fd opened;
    int fd = own && u.fd.valid() ? u.fd.get() : -1;
    if (fd < 0) {
        opened.reset(::openat(stack.fds[k], n->c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        fd = opened.get();
    }
    struct statx st {};
    return fd >= 0 && ::statx(fd, "", AT_EMPTY_PATH, STATX_TYPE | STATX_BTIME, &st) == 0 && S_ISREG(st.stx_mode) &&
           (st.stx_mask & STATX_BTIME) && ns_of(st.stx_btime) >= since && ::fgetxattr(fd, kOrigin, nullptr, 0) >= 0;
}

// Known-bases hold a path's real content as a run's exit saw it still as
// copied up, or as an apply found or left it: the real file was there. It
// is gone now (deleted, or its dir moved away): bringing the session's
// copy back would undo that, so it is a stale copy (a conflict).
const std::string* Walker::known_gone(const Seen& u, const std::string& path) const {
    if (!opts_.known_bases || (u.side.type != Type::File && u.side.type != Type::Symlink)) return nullptr;
    const std::set<std::string>* known = opts_.known_bases->gone_evidence(path);
    if (!known) return nullptr;
    // A fingerprint (32 hex digits), bare or with "/MODE": what a base record holds.
    for (const std::string& c : *known)
        if ((c.size() == 32 || (c.size() > 33 && c[32] == '/')) && std::all_of(c.begin(), c.begin() + 32, [](char ch) {
                return std::isxdigit(static_cast<unsigned char>(ch));
            }))
            return &c;
    return nullptr;
}

BaseEntry Walker::gone_base(const std::string& path, Type type, const std::string& known) {
    BaseEntry b;
    b.path = path;
    b.type = type;
    b.fingerprint = known.substr(0, 32);
    if (known.size() > 33) b.mode = static_cast<uint32_t>(std::strtoul(known.c_str() + 33, nullptr, 8)) & 07777;
    b.stale = true;
    return b;
}

BaseEntry Walker::absent_base(const std::string& path) {
    BaseEntry b;
    b.path = path;
    b.absent = true;
    return b;
}

}  // namespace capture
