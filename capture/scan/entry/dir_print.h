// A directory's subtree fingerprint: its permission bits and, for each entry
// below it (recursively), its path relative to it, type, permission bits
// (not a symlink's), size (a file's) and content (a file's bytes, a link's
// target). An apply remembers it for each real dir its patch saw fresh and
// recorded whole (capture/patch/known_bases.h); a dir whose ctime an undo or
// a recovery moved (renamed back) is then no stale copy when it holds the
// same again (capture/scan/entry/stale.h). A dir changed inside never matches.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"

namespace capture {

struct SubtreeEntry {
    std::string rel;  // below the dir, "a/b"
    Type type = Type::None;
    uint32_t mode = 0;  // permission bits
    uint64_t size = 0;
    std::string fingerprint;  // a file's content, a symlink's target; "" otherwise
};

// Pure; the entries in any order. "dir:" and 32 hex digits: kept as such in
// the session's known contents, never taken for a file's (a fingerprint,
// bare or with "/MODE", is what capture's known_gone reads as one).
std::string subtree_fingerprint(uint32_t dir_mode, std::vector<SubtreeEntry> entries);

// The real dir open at `dir_fd` (not moved): "" when it cannot be read
// whole, or is larger than a remembered dir may be (then it stays stale).
std::string real_subtree_fingerprint(int dir_fd);

}  // namespace capture
