// Base records that a session's apply saw fresh, kept in the session dir, so
// that an `apply` after `undo` is not a "stale copy" conflict.
//
// A base entry is stale when the real file changed after the sandbox copied
// it up (its ctime is newer): nobody can tell what the agent saw, so apply
// refuses. But an apply changes the real files itself, and `undo` puts them
// back with new ctimes. Before that, the apply had the base records of its
// patch, each taken while the real entry was still what the sandbox copied
// up. A stale entry whose real file now matches such a record (type, size,
// mode and fingerprint) holds exactly the copied-up content again: it is not
// stale. Anything else stays a conflict.
#pragma once
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"

namespace capture {

// The fresh (not stale, present, fingerprinted) base records of m, merged over
// the ones already kept in session_dir (a later record of a path replaces an
// earlier one), written atomically to session_dir/bases.json.
base::Result<void> remember_bases(const std::string& session_dir, const Manifest& m);

// The records kept in session_dir; none when there is no file. The file is
// read as untrusted input, with the manifest's reader.
base::Result<std::vector<BaseEntry>> known_bases(const std::string& session_dir);

// Clears `stale` on each entry of *base that matches a known record. Returns
// how many it cleared.
size_t clear_known_stale(std::vector<BaseEntry>* base, const std::vector<BaseEntry>& known);

}  // namespace capture
