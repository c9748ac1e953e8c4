// Listing a directory by fd, shared by capture's walk and apply's tree walks.
#pragma once
#include <string>
#include <vector>

#include "helper/base/result.h"

namespace base {

struct DirEntry {
    std::string name;
    unsigned char type;  // d_type: DT_UNKNOWN when the filesystem does not say
    bool operator<(const DirEntry& o) const { return name < o.name; }
};

// The names in the directory open at dirfd, without "." and "..", sorted
// bytewise (deterministic output). dirfd stays open and owned by the caller;
// a readdir failure is reported, never a silently short list.
Result<std::vector<DirEntry>> list_dir(int dirfd);

// Whether path is a directory itself, not a symlink to one (lstat).
bool is_real_dir(const std::string& path);

// Where to cut a listing in two halves holding about as many subdirs each
// (a tree walk costs little per file but descends into every dir), for a
// walk split over two threads: 0 when it has fewer than two subdirs.
size_t split_by_subdirs(const std::vector<DirEntry>& names);
// The same into up to `parts` pieces: where pieces 1.. start (ascending),
// each piece holding about as many subdirs; empty when fewer than two.
// Walkers that take the next piece as they finish one end together.
std::vector<size_t> split_by_subdirs(const std::vector<DirEntry>& names, size_t parts);

}  // namespace base
