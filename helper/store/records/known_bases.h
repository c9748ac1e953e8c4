// Contents of real files that a session's own applies left or found there:
// the content a partial apply (apply --hunks) wrote, and each base an apply
// saw while it was still what the sandbox copied up (so that `undo`, which
// puts it back with a new ctime, then another apply is no conflict). The real
// file changed after the sandbox copied it, but by layover's hand, so the
// session's copy is not stale against it. Kept in the session directory (known-bases.json); capture
// reads it when it records base entries (ScanOptions::known_bases).
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "helper/base/result.h"

namespace session {

// path (raw bytes, relative to the target) -> fingerprints (32 hex digits)
using KnownBases = std::map<std::string, std::set<std::string>>;

// A known content with its mode ("FINGERPRINT/0644"), as an apply records the
// bases it saw: matched only by the same content and permission bits. A bare
// fingerprint (a partial apply's) matches that content whatever the mode.
std::string known_content(const std::string& fingerprint, uint32_t mode);

// A partial apply's contents (apply --hunks, -p): the real file's before it
// and the one it wrote, each with its permission bits, so that a chmod of
// the real file since is still a change the session's copy is stale against.
std::vector<std::string> partial_known(const std::string& before_fp, uint32_t before_mode, const std::string& after_fp,
                                       uint32_t after_mode);

// An absent file is an empty set; a malformed one an error naming it.
base::Result<KnownBases> read_known_bases(const std::string& session_dir);

// Adds the fingerprints for `path` (written to a temp file, then renamed).
base::Result<void> add_known_bases(const std::string& session_dir, const std::string& path,
                                   const std::vector<std::string>& fingerprints);
// Adds many at once (one rewrite of the file).
base::Result<void> add_known_bases(const std::string& session_dir, const KnownBases& more);

// A fork's (`inherited-bases.json`): every content the source knew, its own
// and what it inherited. Evidence only that a real file was there
// (KnownBasesOnce::gone_evidence), never that a copy is fresh: the source's
// later runs and applies may have known contents the fork's copies never
// saw.
base::Result<void> inherit_known_bases(const std::string& from_dir, const std::string& to_dir);

// The session's known contents, read when first asked for (a walk's two
// threads may ask at once): only a copy whose real file changed since needs
// them, so a session with none never reads the file (which run's exit fills
// with a fingerprint per fresh base: 10,000 modified files, ~1 MB).
class KnownBasesOnce {
public:
    explicit KnownBasesOnce(std::string session_dir) : dir_(std::move(session_dir)) {}
    // Null when none can be read (then every changed copy stays stale).
    const KnownBases* get() const;
    // The contents known at `path`, the session's own or inherited by a
    // fork: a real file was there (capture's known_gone); null: none known.
    const std::set<std::string>* gone_evidence(const std::string& path) const;

private:
    std::string dir_;
    mutable std::once_flag once_, inherited_once_;
    mutable std::optional<KnownBases> known_;
    mutable KnownBases inherited_;
};

}  // namespace session
