// `e` in apply -p: a text edited in $VISUAL / $EDITOR (vi without either),
// run through /bin/sh on the caller's terminal, in a private temp file.
#pragma once
#include <string>

#include "helper/base/result.h"

namespace review {

// The file's text after the editor exits 0; an error names the editor and
// its status otherwise. The temp file (0600, $TMPDIR or /tmp) is removed.
base::Result<std::string> edit_text(const std::string& text, const std::string& suffix);

// `e` on a hunk: the rendered hunk under a heading, then how to edit it.
std::string hunk_edit_text(const std::string& rendered);

// The edited text holds a line that is not a '#' comment (none: the edit
// is cancelled).
bool has_content(const std::string& text);

}  // namespace review
