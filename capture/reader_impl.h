// Private state of capture::Patch, shared by reader.cc and source.cc.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "capture/reader.h"
#include "helper/base/fd.h"

namespace capture {

using Sums = std::vector<std::pair<std::string, std::string>>;

struct Patch::Impl {
    std::string file;
    base::Fd fd;
    Limits limits;
    Manifest manifest;
    std::vector<Member> members;
    Sums sums;  // name as in the tar, fingerprint; manifest first
    bool from_session = false;
    std::string temp;  // a session's on-the-fly patch, removed with the Patch
};

}  // namespace capture
