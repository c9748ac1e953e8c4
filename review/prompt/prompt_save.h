// [s] of the exit prompt (review/prompt/prompt.cc): the picked changes saved
// as a patch file, the rejected ones left out; the session stays.
#pragma once
#include <string>
#include <vector>

#include "capture/patch/reader.h"
#include "helper/store/session/session.h"
#include "review/prompt/rejected.h"
#include "review/prompt/text.h"

namespace review {

// Asks for the file (by default ./layover-STAMP.tar.zst, or under
// STATE/patches when the current dir is in the target) and saves the
// picked changes (`picked`: all when empty). Every outcome is said on stderr;
// returns false when the input ended (the prompt then keeps the session),
// true to go back to the menu.
bool save_from_prompt(const std::string& state, const session::Info& s, const capture::Patch& patch,
                      const PickScope& picked, const std::vector<RejectionState>& rejections);

}  // namespace review
