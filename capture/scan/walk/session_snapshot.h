// What a session's status walk depends on besides its trees, as one string
// (StatusSnapshot::inputs): layover's version, the walk's options, the ignore rules' sources
// other than the real .layoverignore (whose key is among the real keys),
// the session's hidden paths, and the stats of the session files the walk
// reads (meta.json, known-bases.json: a writer of an older version, which
// bumps no generation, still rewrites meta.json).
#pragma once
#include <string>

#include "capture/scan/caches/snapshot.h"
#include "capture/scan/entry/ignore.h"
#include "helper/store/session/session.h"

namespace capture {

std::string status_inputs(const session::Info& s, bool summary_only, const IgnoreOptions& ignore, int session_dirfd);

// The real .layoverignore's key (the ignore rules read it from the target's root).
PathKey ignore_file_key(int target_fd);
// The live upper's root dir, as a key of SnapshotKeys::dirs ("").
PathKey upper_root_key(int upper_fd);

}  // namespace capture
