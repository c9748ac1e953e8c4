// Changes a person rejected (`layover reject`, `n` in `apply -p`), kept in
// the session directory (SESSION/rejections.json) so that later applies skip
// them and the agent can read why. Each record is tied to the content it
// rejected by fingerprints the caller computes (docs/review.md, "Rejections"):
// the store only keeps them. The file is read as untrusted input: strict
// JSON, bounded sizes, relative clean paths, one-line reasons.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "helper/base/result.h"

namespace session {

struct Rejection {
    uint64_t seq = 0;              // 1, 2, ...: assigned by add_rejection, never reused in a session
    std::string path;              // raw bytes, relative to the target, clean
    uint32_t hunk = 0;             // 0 = the whole change, else the hunk's number when rejected
    std::string reason;            // one line, at most kMaxReason bytes; may be empty
    std::string time;              // UTC RFC 3339
    std::string fingerprint;       // the session's version of the path when rejected
    std::string hunk_fingerprint;  // hunks only: the hunk's removed and added lines
    bool operator==(const Rejection& o) const {
        return seq == o.seq && path == o.path && hunk == o.hunk && reason == o.reason && time == o.time &&
               fingerprint == o.fingerprint && hunk_fingerprint == o.hunk_fingerprint;
    }
};

struct Rejections {
    uint64_t next_seq = 1;        // kept when records are removed, so a reader's cursor stays valid
    std::vector<Rejection> list;  // in seq order
};

constexpr size_t kMaxReason = 500;
constexpr size_t kMaxRejections = 100000;
constexpr uint32_t kMaxHunk = 1000000;

// Empty when `reason` may be stored; else what is wrong with it (for the
// caller's one-line error).
std::string reason_problem(std::string_view reason);

// Pure: the file's text and back (the reader is fuzzed: tests/fuzz/t_json.cc).
std::string rejections_to_text(const Rejections& r);
base::Result<Rejections> rejections_from_text(std::string_view text);

// An absent file is no rejections; a malformed one an error naming it.
base::Result<Rejections> read_rejections(const std::string& session_dir);
// Adds `r` with the next seq (returned), replacing an earlier record of the
// same path and hunk number. Written to a temp file, then renamed.
base::Result<uint64_t> add_rejection(const std::string& session_dir, Rejection r);
// Drops the records with these seqs (unknown ones are ignored).
base::Result<void> remove_rejections(const std::string& session_dir, const std::vector<uint64_t>& seqs);

}  // namespace session
