// Staging's file writer: a staged file created, its data written in
// pieces (writeback started as it goes), then finished with its size,
// xattrs, ACLs, mode and mtime. Used by stage.cc's Stager, on the reading
// thread or on a writer thread (each with its own FileOut).
#pragma once
#include <cstdint>
#include <string>

#include "review/apply/stage.h"

namespace review::staging {

struct Target {
    PlanItem* item;
    const capture::Member* m;
    std::string staged;
    bool root;          // the unit's own entry (not inside a staged tree)
    uint64_t size;      // the file's size: the member's, or the chosen content's (apply --hunks)
    bool done = false;  // file data written (set by the one writer that had it)
    // The entry as staging finished it (fstat of its own fd), for the undo
    // record of a new tree; set by the one thread that finished it.
    EntryStat after = {};
    bool stat_ok = false;
};

// One writer's state: the file being written and its own directory cache
// (never shared between threads).
struct FileOut {
    explicit FileOut(int root) : dirs(root) {}
    DirCache dirs;
    base::Fd cur;
    Target* target = nullptr;
    uint64_t kicked = 0;    // writeback started for [0, kicked) of cur
    uint64_t written = 0;   // end of the data written to cur
    bool own_mode = false;  // cur was created with its member's permission bits
};

// The error of staging path: the fix for a full, read-only or unwritable target.
base::Error staging_error(const std::string& path, const base::Error& e);
// Stat fd (the entry just finished) into t.after; a failure leaves the tree to be walked.
void note_stat(Target& t, int fd);
base::Result<void> open_file(FileOut& out, Target& t);
// Finishes the file out has open, if any, then opens t's.
base::Result<void> begin_file(StageCtx& ctx, FileOut& out, Target& t);
base::Result<void> write_chunk(StageCtx& ctx, FileOut& out, uint64_t off, const char* data, size_t len);
// Size, xattrs, ACLs of the replaced original, mode, mtime; then close.
base::Result<void> finish_file(StageCtx& ctx, FileOut& out);

}  // namespace review::staging
