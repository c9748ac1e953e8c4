// Gather what `layover diff` shows: for each file-level path a patch
// touches, the real target's current entry (read beneath the target, never
// following a symlink) and the patch's new entry.
#pragma once
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/base/result.h"
#include "review/diff/format.h"
#include "review/diff/merge3.h"

namespace review {

struct DiffSet {
    std::vector<FileDiff> files;     // sorted by path bytes, as git orders them
    size_t changes = 0;              // changes selected (some have no file-level diff: dirs, fifos)
    std::vector<std::string> notes;  // warnings for a person (stale bases, unrepresentable entries)
};

struct DiffScope {
    std::vector<std::string> paths;    // only these paths and their subtrees (empty: all)
    std::vector<std::string> exclude;  // --exclude globs within them (the exit prompt's [p])
    uint64_t max_load = kMaxMerge;     // bigger files are reported as binary, not read
    // A changed file bigger than this (and at most max_load) on both sides
    // is not held: only the window that differs is (review/diff/trim.h), at
    // most this big a side; a wider one is reported as differing, like a
    // file over max_load.
    uint64_t hold = 8ull << 20;
    int old_root = -1;  // the tree the old sides are read from (default: the manifest's target)
};

// Pure: is `path` one of `scope` or beneath one of them (empty scope: yes)?
bool in_scope(const std::vector<std::string>& scope, const std::string& path);

base::Result<DiffSet> collect_diffs(const capture::Patch& patch, const DiffScope& scope);

// Read one entry beneath the root as a diff side: regular files and symlinks
// exist, anything else (or nothing, or a symlinked parent) does not.
base::Result<Side> read_real_side(int root, const std::string& rel, uint64_t max_load);

}  // namespace review
