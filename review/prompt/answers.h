// `apply -p`'s answers, kept when the apply they chose did not happen (a
// conflict, a failure, a cancel at the secrets question, a dry run) and
// offered again by the next `apply -p` of the same patch or session to the
// same target. Each answer is keyed by its path and what it was given on: a
// hunk's lines (context, '-' and '+', without the "@@" line, whose numbers
// move when the file changes elsewhere; with it when the file has such a
// hunk more than once, attack27) and which of them it is; a whole change's kind, types, modes, size, mtime, link
// target, xattrs and content (a file's fingerprint: an agent sets size and
// mtime at will, attack25). A changed hunk or change so never takes a stale answer:
// it is asked again.
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "capture/scan/entry/change.h"
#include "helper/base/result.h"

namespace review {

struct Answers {
    // key -> "y", "n", "s" (split, then the parts' own answers), or "e" and
    // the edited hunk's text.
    std::map<std::string, std::string> given;
    // Whose they are: the session's dir, or the patch file's real path ("" in
    // a file kept before it was recorded). `layover gc` drops them once it is
    // gone (a discarded or removed session, a deleted patch) or applied.
    std::string owner;
};

// Pure: the keys (32 hex digits).
std::string hunk_key(std::string_view path, std::string_view body, size_t nth);
std::string change_key(const capture::Change& c, std::string_view content);

// Where the answers of an `apply -p` of `source` (a session's name and dir,
// or a patch file's real path) to `target` (its real path) are kept:
// STATE/apply-p/KEY.
std::string answers_file(const std::string& state_dir, std::string_view source, std::string_view target);

// A file that is missing holds none; one that cannot be read or parsed is
// an error (it is then not offered, and overwritten by the next save).
base::Result<Answers> load_answers(const std::string& file);
// Written 0600 beside its place and renamed in; STATE/apply-p made 0700.
base::Result<void> save_answers(const std::string& file, const Answers& a);
// 0 or the errno; never through a symlinked or foreign STATE/apply-p.
int drop_answers(const std::string& file);

// The files in STATE/apply-p (for `layover gc`; none when it is a symlink
// or not the caller's): each with its owner (""
// when it has none or cannot be read: `readable` says which), its mtime
// (the last save) and size. A save's leftover temporary is listed too, with
// `temporary` set.
struct KeptAnswersFile {
    std::string file, owner;
    int64_t mtime_s = 0;
    uint64_t bytes = 0;
    bool readable = false, temporary = false;
};
std::vector<KeptAnswersFile> list_kept_answers(const std::string& state_dir);
// Drops those whose owner is `owner` (`discard --now` of a session: its dir).
void drop_answers_of(const std::string& state_dir, const std::string& owner);

}  // namespace review
