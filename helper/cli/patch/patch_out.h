// The file a patch is written to (`save -o FILE`, `run --on-exit
// save:FILE`): one that holds something else is never written over.
#pragma once
#include <string>

namespace cli {

// "" when `out` may be written: absent, not a regular file, empty, or a
// patch already (zstd's magic, as a second save of the same name leaves).
// Else the refusal: "notes.txt exists and is not a layover patch; nothing
// was written: pick another FILE.tar.zst, or remove that file first" (it
// was replaced silently: `-o notes.txt` wrote over a file of the tree).
std::string other_file_at(const std::string& out);

}  // namespace cli
