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

}  // namespace base
