// A session's rejections judged against a patch opened from it (`apply`,
// `save` and the exit prompt), and what an apply of it skips: the same rule
// as review/prompt/rejected.h, with the patch as the session's side and the
// target as the real one.
#pragma once
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "capture/patch/save.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"
#include "review/prompt/rejected.h"

namespace review {

// The patch's new entry at a path as a diff side (holds `patch` by reference).
SideOf patch_sides(const capture::Patch& patch);

// The rejections recorded in session_dir judged against `patch` and the real
// tree at `target`; empty when there are none.
base::Result<std::vector<RejectionState>> patch_rejections(const capture::Patch& patch, const std::string& session_dir,
                                                           const std::string& target);

// What an apply leaves out for the rejections in force that `opts` selects:
// a whole change an --exclude of exactly its path, a hunk an --exclude-hunks
// of its number today (unless --hunks takes it). Returns the lines of those
// skipped (rejection_line), each rejection that leaves something out once: not
// one another takes whole already (beneath a rejected dir, a hunk of a file
// rejected whole); `superseded` gets those no longer in force because the
// agent changed the file since.
std::vector<std::string> skip_in_force(const std::vector<RejectionState>& states, ApplyOptions* opts,
                                       std::vector<std::string>* superseded);

// What a save leaves out for the rejections in force that opts->only and
// opts->exclude select:
// a whole change an exclude of exactly its path, rejected hunks by storing
// the file with the real file's lines there (opts->contents; a file left
// with no hunk is excluded). Returns and fills as skip_in_force.
base::Result<std::vector<std::string>> leave_out_rejected(const std::vector<RejectionState>& states,
                                                          const SideOf& session_side, const SideOf& real_side,
                                                          capture::SaveOptions* opts,
                                                          std::vector<std::string>* superseded);
// The same with the patch opened from the session as its side and the tree
// at `target` as the real one (the exit prompt's [s]).
base::Result<std::vector<std::string>> leave_out_rejected(const std::vector<RejectionState>& states,
                                                          const capture::Patch& patch, const std::string& target,
                                                          capture::SaveOptions* opts,
                                                          std::vector<std::string>* superseded);

// The exit prompt's pick (selected: one per change): the rejections of the
// changes left unpicked dropped. An unpicked rejected dir then takes nothing
// with it: a change picked beneath it is applied and saved, the dir coming
// along to hold it; a rejected dir left picked takes all it holds.
std::vector<RejectionState> picked_only(const std::vector<RejectionState>& states,
                                        const std::vector<capture::Change>& changes, const std::vector<char>& selected);

}  // namespace review
