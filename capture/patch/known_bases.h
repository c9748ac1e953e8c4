// After an apply of a session: keep the bases it saw fresh as known contents
// (helper/store/records/known_bases.h), so that an apply after `undo` is not a
// "stale copy" conflict.
//
// A base entry is stale when the real file changed after the sandbox copied
// it up (its ctime is newer): nobody can tell what the agent saw, so apply
// refuses. But an apply changes the real files itself, and `undo` puts them
// back with new ctimes. The apply had the base records of its patch, each
// taken while the real entry was still what the sandbox copied up: a stale
// entry whose real content and permission bits match one holds the copied-up
// file again.
#pragma once
#include <string>

#include "capture/patch/reader.h"
#include "helper/base/result.h"

namespace capture {

// The fresh (not stale, present, fingerprinted file or symlink) base records
// of m, added to the session's known contents in session_dir; and for each
// real dir m deletes or replaces, seen fresh with all of its subtree, that
// subtree's fingerprint (capture/scan/entry/dir_print.h). Every apply calls it
// before its commit: a killed apply keeps nothing after it, and its
// recovery renames the originals back (a new ctime), which a retry took for
// stale copies (recovery2: a file over run's exit's 16 MiB, or any of a
// crashed session's); again after it, which then writes nothing new.
base::Result<void> remember_bases(const std::string& session_dir, const Manifest& m);

}  // namespace capture
