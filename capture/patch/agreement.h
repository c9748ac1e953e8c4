// Pure checks that a patch's manifest and payload agree, run by the reader
// before anything acts on a patch.
#pragma once
#include <string>
#include <vector>

#include "capture/patch/reader.h"

namespace capture {

// "" when they agree; otherwise the first problem, naming the path.
std::string check_agreement(const Manifest& m, const std::vector<Member>& members, const Limits& limits);

}  // namespace capture
