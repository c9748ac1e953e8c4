// Private state of capture::Patch, shared by reader.cc and source.cc.
#pragma once
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "capture/patch/kept_data.h"
#include "capture/patch/reader.h"
#include "capture/patch/zstream.h"
#include "helper/base/fd.h"

namespace capture {

using Sums = std::vector<std::pair<std::string, std::string>>;

// Where validation found a File member's stored data in the decoded stream
// (unused for other kinds of member).
struct StoredData {
    uint64_t offset = 0;
    uint64_t bytes = 0;
    size_t sum = 0;     // the member's entry in the sums (originals of layover-patch/3 lie between)
    int64_t kept = -1;  // where validation kept it decoded (KeptData), or -1
};

struct Patch::Impl {
    std::string file;
    base::Fd fd;
    Limits limits;
    Manifest manifest;
    std::vector<Member> members;
    Sums sums;                            // name as in the tar, fingerprint; manifest first
    std::vector<StoredData> stored;       // parallel to members
    std::vector<ZstdReader::Mark> marks;  // where decoding may restart
    KeptData kept;                        // small files' data as validated (Limits::keep_decoded)
    bool from_session = false;            // a session's on-the-fly patch, unlinked once open (source.cc)
    // layover-patch/2 and /3: each original by fingerprint.
    std::map<std::string, std::string> original_by_fp;
};

}  // namespace capture
