// When the session first had a copy of a path its command then renamed or
// linked another file over (`sed -i`, an editor's atomic save, `mv a b`,
// `rm b && ln a b`): the replaced copy's birth (or its layer's start),
// noted by the supervisor as it lets the call run
// (helper/sandbox/rename_note.cc), before the kernel drops that copy.
// capture/scan/walker_since.cc takes the earliest as the copy-up time of
// the path (docs/security.md, "When the copy was made"). Kept in the
// session directory, out of the sandbox's reach: `first-copies`, one line
// per path, "NS HEXPATH\n"; the first line for a path is the earliest.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace session {

// Appends one line. False when nothing was noted (a write that fails, or a
// file past 8 MiB): the caller refuses the rename it was to note
// (helper/sandbox/rename_note.cc).
bool note_first_copy(const std::string& session_dir, const std::string& path, int64_t born_ns);

// A fork's: the source's notes, as they are now (its layers' copies are the
// fork's too; a note from a later step only makes a copy look older). Best
// effort, as noting is.
void copy_first_copies(const std::string& from_dir, const std::string& to_dir);

// path (raw bytes, relative to the target) -> the earliest birth noted.
// A missing file is empty; a line that does not parse is skipped.
std::map<std::string, int64_t> read_first_copies(const std::string& session_dir);

// Read when first asked (a walk's two threads may ask at once).
class FirstCopiesOnce {
public:
    explicit FirstCopiesOnce(std::string session_dir) : dir_(std::move(session_dir)) {}
    // The earliest birth noted for `path`, or -1.
    int64_t get(const std::string& path) const;

private:
    std::string dir_;
    mutable std::once_flag once_;
    mutable std::map<std::string, int64_t> noted_;
};

}  // namespace session
