// `layover undo` of an undo record: put every path apply touched back as it
// was, byte-exact (originals come back by rename from the undo store), after
// checking nothing changed since the apply. Crash-safe: journaled, and an
// interrupted undo is finished by the next apply/undo on the target.
#pragma once
#include <string>

#include "helper/base/result.h"
#include "review/apply/apply.h"

namespace review {

struct UndoOptions {
    std::string target;  // empty: the tree the record names (TARGET/.layover-undo/ID: the tree holding it)
    bool force = false;  // restore even over later changes (those are moved to the store's trash)
    bool dry_run = false;
};

// `record`: the undo store dir (STATE/undo/DEV-INO/ID or TARGET/.layover-undo/ID), or its undo.json.
base::Result<ApplyReport> undo_record(const std::string& record, const UndoOptions& opts);

// True when `path` names an undo record (rather than an undo patch file).
bool is_undo_record(const std::string& path);

}  // namespace review
