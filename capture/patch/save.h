// Capture a session's upper layer into a patch file (atomic: temp + rename,
// created 0600). Used by `layover save`, `run --on-exit save:FILE`, the
// prompt's [s], and Patch::open_source for sessions.
#pragma once
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "capture/scan/entry/change.h"
#include "capture/scan/entry/ignore.h"
#include "capture/scan/entry/step_range.h"
#include "helper/base/result.h"
#include "helper/store/session/session.h"

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
    StepRange steps;  // which layers (capture/scan/walk/session_scan.h); default all
    // Globs to leave out, as apply's --exclude (a directory: its subtree).
    std::vector<std::string> exclude;
    // New contents for some modified regular files (rejected hunks left
    // out): stored instead of the session's, with its mode, mtime and xattrs.
    std::map<std::string, std::string> contents;
    // Called, in the child that writes the patch, with the content of each
    // file it stores (dense and at most kContentHookMax bytes, as read for
    // the patch: no second read) and a reader of that file's base content
    // (nullopt for an addition or a base that is not a regular file, or too
    // big); what it returns is gathered into save_session's `notes`. save's
    // secret warning, without a second scan of the session.
    using BaseText = std::function<std::optional<std::string>()>;
    std::function<std::string(const Change&, std::string_view now, const BaseText& base)> on_content;
    // What an error says was being done to the session: "saving session
    // 'NAME': ..." for save, "reading" for the capture diff, show and apply
    // read once (Patch::open_session), where "saving" misled.
    const char* doing = "saving";
};
inline constexpr uint64_t kContentHookMax = uint64_t{1} << 20;

// unmatched: the entries of opts.only that select no change (found by the
// same walk), for the caller's warning.
base::Result<void> save_session(const session::Info& s, const std::string& out_file, const SaveOptions& opts = {},
                                std::string* notes = nullptr, std::vector<std::string>* unmatched = nullptr);

}  // namespace capture
