// A discard from the prompt is recoverable: the session dir moves to
// STATE/trash/NAME (NAME.1, NAME.2... when taken), where `layover restore`
// finds it and purging drops it after 24 hours (by the entry's ctime,
// which the rename sets).
#pragma once
#include <string>

#include "helper/base/result.h"
#include "helper/store/session.h"

namespace review {

// Returns the trash entry's path. Refuses a session that is running.
base::Result<std::string> move_to_trash(const std::string& state, const session::Info& s);

}  // namespace review
