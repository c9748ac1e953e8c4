// The pure classifier: one upper-layer entry against the lower (real) entry
// at the same path. No syscalls; content equality is asked lazily, only when
// it can matter (file over file of equal size).
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "capture/scan/entry/change.h"
#include "capture/scan/entry/xattr.h"

namespace capture {

// One side of a path as the walker saw it.
struct Side {
    Type type = Type::None;  // upper: File..Socket, Whiteout, OpaqueDir, Other; lower: None..Socket, Other
    uint32_t mode = 0;       // permission bits (07777)
    uint64_t size = 0;
    std::string link_target;
    Xattrs xattrs;  // user xattrs only (see user_xattrs)
    // Upper side only: -1 compare xattrs; 0 or 1: already known to differ or
    // match (a cached verdict, whose xattrs were not read again).
    int xattrs_same = -1;
    // Lower side only: a dir whose entries could not be listed, so an opaque
    // dir over it stays a replacement rather than being compared entry by entry.
    bool unlisted = false;
};

// The upper entry's type from its stat and overlay markers:
// char 0/0 or a zero-size file marked user.overlay.whiteout is a whiteout;
// a dir marked opaque=y is an opaque dir.
Type upper_type(uint32_t st_mode, uint64_t rdev, uint64_t size, const OverlayMarks& marks);
// A lower entry's type from its stat (devices are Other).
Type lower_type(uint32_t st_mode);

struct Verdict {
    bool is_change = false;
    Kind kind = Kind::Added;
    bool captured = true;          // false: reported but not stored (sockets)
    bool descend = false;          // upper is a dir: walk its children
    bool descend_lower = false;    // ...comparing them with the lower dir's children (an opaque
                                   // dir's: the walker adds the lower children it lacks as deletions)
    bool lower_subtree = false;    // record the whole lower subtree in base (dir deleted or replaced)
    bool whiteout_member = false;  // store DIR/.wh.NAME
    bool opaque_member = false;    // store DIR/.wh..wh..opq
    std::string error;             // non-empty: this entry cannot be captured (why)
};

// content_equal is called at most once, only for a file over a file of the same size.
Verdict classify(const Side& upper, const Side& lower, const std::function<bool()>& content_equal);

}  // namespace capture
