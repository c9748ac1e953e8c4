// When the session first had a copy of a path its command then renamed or
// linked another file over (`sed -i`, an editor's atomic save, `mv a b`,
// `rm b && ln a b`): the replaced copy's birth (or its layer's start),
// noted by the supervisor as it lets the call run
// (helper/sandbox/rename/rename_note.cc), before the kernel drops that copy.
// capture/scan/walk/walker_since.cc takes the earliest as the copy-up time of
// the path (docs/security.md, "When the copy was made"). Kept in the
// session directory, out of the sandbox's reach: `first-copies`, one line
// per path, "NS HEXPATH\n"; the first line for a path is the earliest.
//
// In the same file, the names renames and links made: "moves NS\n" when a
// kept run begins noting them (NS: by the coarse clock that stamps a file's
// birth, before the command could start), then "to HEXPATH\n" for each name
// a rename (either name of an exchange) or a hard link made in the target.
// From then on, a file overlayfs marked copied up that holds a path no
// rename or link made was copied up at that path: where the real tree has
// no file there now, the user deleted it (docs/security.md, "A real file
// removed since"). Readers older than these lines skip them.
//
// Past 8 MiB a last line "full\n" says that nothing more is noted: the walk
// then counts every copy from its layer's start (a conflict wherever the
// user changed the real file during the session, never a silent overwrite).
// A run that notes nothing (--on-exit discard: its session is dropped at its
// end) leaves its session so too when it does not end (killed, or stopped by
// a limit): its meta.json says so (session::unnoted_since), and a resume or
// a fork of it appends "moves NS\nfull\n" (mark_unnoted) before meta.json
// stops saying it.
#pragma once
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "helper/base/fd.h"

namespace session {

// The supervisor's notes for one run, the file held open (appending). Each
// call appends one line; false when it could not be written (the disk full,
// the file unusable): the caller refuses the call it was to note
// (helper/sandbox/rename/rename_note.cc). Past 8 MiB, "full" once, then nothing.
class Notes {
public:
    explicit Notes(const std::string& session_dir);
    bool first_copy(const std::string& path, int64_t born_ns);
    // A kept run begins noting every name renames and links make (once a run).
    bool moves_begin(int64_t now_ns);
    // A name a rename or a link made (raw bytes, relative to the target).
    bool moved_to(const std::string& path);

private:
    bool append(const std::string& line);
    base::Fd fd_;
    int64_t size_ = 0;
    bool full_ = false;
};

// A fork's: the source's notes, as they are now (its layers' copies are the
// fork's too; a note from a later step only makes a copy look older). Best
// effort, as noting is.
// A source that noted nothing (session::unnoted_since) marks the fork's so.
void copy_first_copies(const std::string& from_dir, const std::string& to_dir);

// The session's layers hold copies a run did not note (session::unnoted_since):
// from now on its notes read as full, and its moves as noted since `since_ns`.
// Best effort (a failure leaves the notes as they were).
void mark_unnoted(const std::string& session_dir, int64_t since_ns);

// path (raw bytes, relative to the target) -> the earliest birth noted.
// A missing file is empty; a line that does not parse is skipped.
std::map<std::string, int64_t> read_first_copies(const std::string& session_dir);

struct Moves {
    int64_t since = -1;          // the first "moves" line; -1: none
    std::set<std::string> made;  // the names renames and links made
    bool full = false;           // past 8 MiB: some were not noted
};
Moves read_moves(const std::string& session_dir);

// Read when first asked (a walk's two threads may ask at once).
class FirstCopiesOnce {
public:
    // unnoted_since >= 0: the session's last run noted nothing
    // (session::unnoted_since): read as full, moves noted since then.
    explicit FirstCopiesOnce(std::string session_dir, int64_t unnoted_since = -1)
        : dir_(std::move(session_dir)), unnoted_(unnoted_since) {}
    // The earliest birth noted for `path`, or -1.
    int64_t get(const std::string& path) const;
    // When noting renames and links began (-1: never), whether a rename or
    // a link made `path` or a dir above it (as noted), and whether the
    // notes are full (some births and names were not noted).
    int64_t moves_since() const;
    bool moved_under(const std::string& path) const;
    bool full() const;

private:
    void read() const;
    std::string dir_;
    int64_t unnoted_ = -1;
    mutable std::once_flag once_;
    mutable std::map<std::string, int64_t> noted_;
    mutable Moves moves_;
};

}  // namespace session
