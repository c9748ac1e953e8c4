// The overlay's root takes the upper root's attributes: the upper root gets
// the real target root's mode, so a read-only target root is read-only
// inside too (owner r-x always kept, so layover can still read its layer).
#pragma once
#include <string>

#include "helper/base/result.h"

namespace session {

base::Result<void> match_root_mode(const std::string& upper, const std::string& target);

}  // namespace session
