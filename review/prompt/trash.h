// A discard from the prompt is recoverable: the session dir moves to
// STATE/trash/NAME (NAME.1, NAME.2... when taken), where `layover restore`
// finds it and purging drops it after 24 hours (by the entry's ctime,
// which the rename sets).
#pragma once
#include <string>

#include "helper/base/result.h"
#include "helper/store/session/session.h"

namespace review {

// Returns the trash entry's path. Refuses a session that is running.
base::Result<std::string> move_to_trash(const std::string& state, const session::Info& s);

// The entry a `layover restore` takes, of the path move_to_trash returned
// ("NAME", or "NAME.1" when an older discard holds the name).
std::string trash_entry(const std::string& trashed);

// "session 'NAME' moved to the trash for 24 hours; 'layover restore ENTRY'
// brings it back": what `discard` and every apply that trashes the applied
// session (the exit prompt's, --on-exit apply) say.
std::string trashed_line(const std::string& name, const std::string& trashed);

}  // namespace review
