// One entry of the scan (an upper layer's or the real tree's) looked at
// fd-relative: statx with AT_SYMLINK_NOFOLLOW, files and dirs opened with
// O_NOFOLLOW (fifos and sockets never), the overlay markers and user xattrs
// read, and the entry typed for the classifier (capture/scan/entry/classify.h).
#pragma once
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <string>

#include "capture/scan/entry/classify.h"
#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace capture {

// One entry (upper or lower side) with what classification needs.
struct Seen {
    bool exists = false;
    struct statx st {};
    Side side;
    base::Fd fd;        // files and dirs: open for xattrs / content / descending
    bool full = false;  // xattrs read (a deferred file: only stat'ed; see complete())
    // An upper entry: when the session first had its path, if that is
    // earlier than its birth (Walker::settle_first_copy); -1: its birth.
    int64_t first_ns = -1;
    // An upper dir where the real tree has none, copied up from the real dir
    // its path had (Walker::copied_from_real): that real dir is gone since,
    // and what the session holds below it (files, symlinks) is stale.
    bool gone_real = false;
};

// `name` in dirfd (path: its path in the tree, for errors). Absent (ENOENT):
// exists is false. defer: a regular file (upper: of size > 0, which cannot be
// a whiteout) is only stat'ed; complete() opens it and reads its xattrs when
// the verdict needs them. dtype: getdents' type of an upper entry, which lets
// a file or dir be opened first and stat'ed through its fd. open_anyway: a
// deferred upper file is opened all the same, for the content reader.
base::Result<Seen> look(int dirfd, const std::string& name, const std::string& path, bool upper, bool defer = false,
                        unsigned char dtype = DT_UNKNOWN, bool open_anyway = false);
// A deferred regular file: open it (once), check it is still the file that
// was stat'ed, and read its xattrs.
base::Result<void> complete(int dirfd, const std::string& name, const std::string& path, bool upper, Seen* s);

}  // namespace capture
