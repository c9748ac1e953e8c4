// apply --hunks / --exclude-hunks: for each file with a hunk choice, the
// real file's content with only the chosen hunks of the patch applied. The
// hunks are the ones `layover diff` shows (real file against the patch's new
// content), so their numbers are the diff's. A choice that takes every hunk
// applies the file whole; one that takes none leaves the file out.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/apply/apply.h"
#include "review/apply/plan.h"

namespace review {

// Fills the items' `content` and the report's `partial`; drops items whose
// choice takes no hunk. An error (nothing is applied) names a path that is
// not a modified text file among the items, or a hunk that does not exist.
// A real file that no longer matches its base record is a conflict on its item.
// The new contents of these File members, in one pass over the payload
// (holes as zeros, a trailing one included).
base::Result<std::map<std::string, std::string>> read_new_contents(const capture::Patch& patch,
                                                                   const std::map<std::string, PlanItem*>& items);

// The patch's other names for a file: path -> the first hard link member to
// it among the items (a member or one inside a new dir's tree). Those share
// the file's staged content, so a part of it (hunks, a merge) would reach
// them too, unlike what show and diff list for them.
std::map<std::string, std::string> hard_linked_names(const std::vector<PlanItem>& items);

// Files chosen by hunk that have a conflict already (their real content is
// not the patch's base): hard, and the reason says why --force will not do.
void hunk_conflicts_are_hard(const HunkChoices& choices, std::vector<PlanItem>& items);

base::Result<void> choose_partial(int root, const capture::Patch& patch, const HunkChoices& choices,
                                  std::vector<PlanItem>& items, std::vector<PartialFile>* partial);

// After a partial apply of a session: each file's real content before and
// after the part (with its mode) is layover's own doing, not a change the
// session's copy went stale against (helper/store/records/known_bases.h). Returns
// one warning for each file it could not record, "applied, but ...".
std::vector<std::string> remember_partial(const std::string& session_dir, const std::vector<PartialFile>& partial);

}  // namespace review
