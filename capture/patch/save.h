// Capture a session's upper layer into a patch file (atomic: temp + rename,
// created 0600). Used by `layover save`, `run --on-exit save:FILE`, the
// prompt's [s], and Patch::open_source for sessions.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "capture/scan/ignore.h"
#include "capture/scan/step_range.h"
#include "helper/base/result.h"
#include "helper/store/session.h"

namespace capture {

struct SaveOptions {
    // If non-empty: capture only these paths (and their subtrees) or what
    // these globs select (base::PathFilter), with the changed dirs above them.
    std::vector<std::string> only;
    IgnoreOptions ignore;  // what the ignore rules leave out (counted in the manifest's "ignored")
    // fsync before the rename. Off for a capture that is read once and
    // deleted (Patch::open_source of a session: diff, show): a crash loses
    // nothing then, and the fsync waited for the disk on every `diff`.
    bool durable = true;
    // The base content of each modified text file up to this size goes into
    // the patch (layover-patch/2, .layover/originals), for a 3-way merge
    // later; 0 (--no-originals): none.
    uint64_t max_original = 1ull << 20;
    StepRange steps;  // which layers (capture/scan/session_scan.h); default all
    // Globs to leave out, as apply's --exclude (a directory: its subtree).
    std::vector<std::string> exclude;
    // New contents for some modified regular files (rejected hunks left
    // out): stored instead of the session's, with its mode, mtime and xattrs.
    std::map<std::string, std::string> contents;
};

base::Result<void> save_session(const session::Info& s, const std::string& out_file, const SaveOptions& opts = {});

}  // namespace capture
