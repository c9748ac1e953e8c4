// A patch's step records (docs/patch-format.md "steps"): the session's
// history, carried in the manifest so that older readers, which ignore
// unknown fields, still read the patch. The content stays flattened.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "helper/base/result.h"
#include "helper/store/layers/steps.h"

namespace base::jsonread {
class Parser;
}

namespace capture {

// A session's records for its patch: its frozen steps' and then the live
// upper's (when it changed anything), each with only the paths `keep`
// accepts (what --ignore and `save -- PATH` leave in). None when the session
// has no frozen step: a one-run session's patch is what it always was. Run
// it where the session's files are readable (the owner's namespace).
base::Result<std::vector<steps::Record>> session_records(const std::string& session_dir, const std::string& target,
                                                         const std::function<bool(const std::string&)>& keep);
// Appends `,\n "steps": [...]` (nothing when there are no records).
void steps_to_manifest(std::string* out, const std::vector<steps::Record>& records);
// The "steps" value, as untrusted input: an array of records numbered
// upwards without repeats, bounded, at most one `live` record and only last;
// each record's paths clean and relative (steps::read_record).
base::Result<std::vector<steps::Record>> steps_from_manifest(base::jsonread::Parser& p);

}  // namespace capture
