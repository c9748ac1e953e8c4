#include "capture/scan/entry/classify.h"

#include <sys/stat.h>

namespace capture {

Type upper_type(uint32_t st_mode, uint64_t rdev, uint64_t size, const OverlayMarks& marks) {
    switch (st_mode & S_IFMT) {
        case S_IFREG: return (size == 0 && marks.whiteout) ? Type::Whiteout : Type::File;
        case S_IFDIR: return marks.opaque ? Type::OpaqueDir : Type::Dir;
        case S_IFLNK: return Type::Symlink;
        case S_IFIFO: return Type::Fifo;
        case S_IFSOCK: return Type::Socket;
        case S_IFCHR: return rdev == 0 ? Type::Whiteout : Type::Other;
        default: return Type::Other;
    }
}

Type lower_type(uint32_t st_mode) {
    switch (st_mode & S_IFMT) {
        case S_IFREG: return Type::File;
        case S_IFDIR: return Type::Dir;
        case S_IFLNK: return Type::Symlink;
        case S_IFIFO: return Type::Fifo;
        case S_IFSOCK: return Type::Socket;
        default: return Type::Other;
    }
}

namespace {

Verdict change(Kind k) {
    Verdict v;
    v.is_change = true;
    v.kind = k;
    return v;
}

bool meta_differs(const Side& u, const Side& l) {
    if (u.mode != l.mode) return true;
    return u.xattrs_same >= 0 ? u.xattrs_same == 0 : u.xattrs != l.xattrs;
}

// Upper is a plain entry (file, dir, symlink, fifo, socket) and the lower
// entry has another type: a type change; a replaced lower dir's whole subtree
// goes into base, since applying deletes it.
Verdict type_change(const Side& l) {
    Verdict v = change(Kind::TypeChanged);
    v.lower_subtree = l.type == Type::Dir;
    return v;
}

Verdict classify_file(const Side& u, const Side& l, const std::function<bool()>& content_equal) {
    switch (l.type) {
        case Type::None:  // case: upper=file lower=none
            return change(Kind::Added);
        case Type::File: {  // case: upper=file lower=file
            // Copy-up on open-for-write or touch leaves equal content: not a change.
            bool same = u.size == l.size && content_equal();
            if (!same) return change(Kind::Modified);
            return meta_differs(u, l) ? change(Kind::Metadata) : Verdict{};
        }
        case Type::Dir:      // case: upper=file lower=dir
        case Type::Symlink:  // case: upper=file lower=symlink
        case Type::Fifo:     // case: upper=file lower=fifo
        case Type::Socket:   // case: upper=file lower=socket
        default: return type_change(l);
    }
}

Verdict classify_dir(const Side& u, const Side& l) {
    Verdict v;
    switch (l.type) {
        case Type::None:  // case: upper=dir lower=none
            v = change(Kind::Added);
            break;
        case Type::Dir:  // case: upper=dir lower=dir
            // Dir mtimes are never a change: every create in it bumps them.
            if (meta_differs(u, l)) v = change(Kind::Metadata);
            v.descend_lower = true;
            break;
        case Type::File:     // case: upper=dir lower=file
        case Type::Symlink:  // case: upper=dir lower=symlink
        case Type::Fifo:     // case: upper=dir lower=fifo
        case Type::Socket:   // case: upper=dir lower=socket
        default: v = type_change(l); break;
    }
    v.descend = true;
    return v;
}

Verdict classify_opaque(const Side& u, const Side& l) {
    Verdict v;
    switch (l.type) {
        case Type::None:  // case: upper=opaque lower=none
            v = change(Kind::Added);
            break;
        case Type::Dir:  // case: upper=opaque lower=dir
            if (l.unlisted) {
                // The lower content cannot be read: all of it goes, the
                // upper children are all new (a replacement).
                v = change(Kind::OpaqueDir);
                v.lower_subtree = true;
                v.opaque_member = true;
                break;
            }
            // Compared as a merged dir is (rm -rf d, then d remade): what
            // both hold is compared, what only the lower holds is deleted.
            if (meta_differs(u, l)) v = change(Kind::Metadata);
            v.descend_lower = true;
            break;
        case Type::File:     // case: upper=opaque lower=file
        case Type::Symlink:  // case: upper=opaque lower=symlink
        case Type::Fifo:     // case: upper=opaque lower=fifo
        case Type::Socket:   // case: upper=opaque lower=socket
        default: v = type_change(l); break;
    }
    v.descend = true;
    return v;
}

Verdict classify_symlink(const Side& u, const Side& l) {
    switch (l.type) {
        case Type::None:  // case: upper=symlink lower=none
            return change(Kind::Added);
        case Type::Symlink:  // case: upper=symlink lower=symlink
            // A symlink's mode means nothing on Linux; only its target counts.
            return u.link_target == l.link_target ? Verdict{} : change(Kind::Modified);
        case Type::File:    // case: upper=symlink lower=file
        case Type::Dir:     // case: upper=symlink lower=dir
        case Type::Fifo:    // case: upper=symlink lower=fifo
        case Type::Socket:  // case: upper=symlink lower=socket
        default: return type_change(l);
    }
}

Verdict classify_fifo(const Side& u, const Side& l) {
    switch (l.type) {
        case Type::None:  // case: upper=fifo lower=none
            return change(Kind::Added);
        case Type::Fifo:  // case: upper=fifo lower=fifo
            return meta_differs(u, l) ? change(Kind::Metadata) : Verdict{};
        case Type::File:     // case: upper=fifo lower=file
        case Type::Dir:      // case: upper=fifo lower=dir
        case Type::Symlink:  // case: upper=fifo lower=symlink
        case Type::Socket:   // case: upper=fifo lower=socket
        default: return type_change(l);
    }
}

Verdict classify_socket(const Side& u, const Side& l) {
    // tar cannot hold a socket: reported, never stored (the lower entry stays).
    Verdict v;
    switch (l.type) {
        case Type::None:  // case: upper=socket lower=none
            v = change(Kind::Added);
            break;
        case Type::Socket:  // case: upper=socket lower=socket
            if (!meta_differs(u, l)) return Verdict{};
            v = change(Kind::Metadata);
            break;
        case Type::File:     // case: upper=socket lower=file
        case Type::Dir:      // case: upper=socket lower=dir
        case Type::Symlink:  // case: upper=socket lower=symlink
        case Type::Fifo:     // case: upper=socket lower=fifo
        default: v = change(Kind::TypeChanged); break;
    }
    v.captured = false;
    return v;
}

Verdict classify_whiteout(const Side& l) {
    Verdict v;
    switch (l.type) {
        case Type::None:  // case: upper=whiteout lower=none
            // Nothing below to hide (the real entry vanished meanwhile): no change.
            return v;
        case Type::Dir:  // case: upper=whiteout lower=dir
            v = change(Kind::Deleted);
            v.lower_subtree = true;
            break;
        case Type::File:                            // case: upper=whiteout lower=file
        case Type::Symlink:                         // case: upper=whiteout lower=symlink
        case Type::Fifo:                            // case: upper=whiteout lower=fifo
        case Type::Socket:                          // case: upper=whiteout lower=socket
        default: v = change(Kind::Deleted); break;  // case: upper=whiteout lower=device
    }
    v.whiteout_member = true;
    return v;
}

}  // namespace

Verdict classify(const Side& u, const Side& l, const std::function<bool()>& content_equal) {
    // A device in the real tree is never replaced; only a whiteout may delete it.
    // case: upper=file lower=device      case: upper=dir lower=device
    // case: upper=opaque lower=device    case: upper=symlink lower=device
    // case: upper=fifo lower=device      case: upper=socket lower=device
    // case: upper=device lower=device
    if (l.type == Type::Other && u.type != Type::Whiteout) {
        Verdict v;
        v.error = "the real entry is a device node, which layover never replaces";
        return v;
    }
    switch (u.type) {
        case Type::File: return classify_file(u, l, content_equal);
        case Type::Dir: return classify_dir(u, l);
        case Type::OpaqueDir: return classify_opaque(u, l);
        case Type::Symlink: return classify_symlink(u, l);
        case Type::Fifo: return classify_fifo(u, l);
        case Type::Socket: return classify_socket(u, l);
        case Type::Whiteout: return classify_whiteout(l);
        default: {  // a device node the program made (mknod needs a capability it has not)
            // case: upper=device lower=none      case: upper=device lower=file
            // case: upper=device lower=dir       case: upper=device lower=symlink
            // case: upper=device lower=fifo      case: upper=device lower=socket
            Verdict v;
            v.error = "a device node in the upper layer cannot be captured";
            return v;
        }
    }
}

}  // namespace capture
