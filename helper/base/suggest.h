// "Did you mean": the option a mistyped one was meant to be, found among
// the long flags a verb's --help text names (not another verb's its prose
// names: 'layover diff --hunk-numbers' in apply's). Pure.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace base {

// The long flag (--word) of `usage` nearest to `arg`, a mistyped option:
// within one edit (insert, delete, change, or swap of neighbours) for a
// name of up to four letters, two for a longer one; else the one flag arg
// begins (`--sess` for --session) when it names three letters or more and
// only one flag begins so. A value (`--sesion=x`) is left out, and a single
// dash read as two (`-json`). "" when none is near, or arg is one of them.
std::string nearest_flag(std::string_view arg, std::string_view usage);

// " (did you mean '--session'?)", or "" when no flag is near.
std::string did_you_mean(std::string_view arg, std::string_view usage);

// The one of `names` (sessions) a mistyped `arg` was meant to be: the
// nearest within one edit for a name of up to four letters, two for a
// longer one, else the one name arg begins (three letters or more). "" when
// none is near or two are as near.
std::string nearest_name(std::string_view arg, const std::vector<std::string>& names);

}  // namespace base
