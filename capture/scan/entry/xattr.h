// Extended attributes of upper/lower entries: reading them from an fd, and the
// pure rules that separate overlayfs's own markers from the user's xattrs.
#pragma once
#include <cstddef>
#include <map>
#include <string>

#include "helper/base/result.h"

namespace capture {

using Xattrs = std::map<std::string, std::string>;

// Every xattr name of an open file or dir (any namespace), name -> value.
// Values are fetched only where they are used: user.* names other than
// overlayfs's markers, and user.overlay.opaque; the others map to "".
base::Result<Xattrs> read_xattrs(int fd);

// What overlayfs (mounted with userxattr) left in an upper entry's xattrs.
struct OverlayMarks {
    bool whiteout = false;    // user.overlay.whiteout (the "xattr whiteout" form)
    bool opaque = false;      // user.overlay.opaque = "y"
    std::string unsupported;  // a marker layover cannot represent (redirect, metacopy), or ""
};

// The user's own user.* xattrs: overlay-internal user.overlay.* dropped, the
// escaped user.overlay.overlay.X turned back into user.overlay.X, and
// security.*, trusted.*, system.* (ACLs) never kept.
Xattrs user_xattrs(const Xattrs& raw, bool upper_layer);

// The overlay markers among raw upper-layer xattrs.
OverlayMarks overlay_marks(const Xattrs& raw);

// Linux's own limits on xattrs (<linux/limits.h>): no file can hold more, so
// a patch claiming more is refused when read (docs/patch-format.md, "Limits").
constexpr size_t kXattrNameMax = 255;    // XATTR_NAME_MAX: bytes of one name, "user." included
constexpr size_t kXattrSizeMax = 65536;  // XATTR_SIZE_MAX: bytes of one value
constexpr size_t kXattrListMax = 65536;  // XATTR_LIST_MAX: a file's names, each with its NUL

// "" when one file may hold these xattrs, else which limit they pass (one
// phrase naming it). Pure.
std::string xattr_limit_problem(const Xattrs& xattrs);

}  // namespace capture
