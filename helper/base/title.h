// The process title (`ps`, `pgrep -f`, /proc/PID/cmdline) of a forked helper
// that outlives the command it was forked from, so that it never shows that
// command's argv: main() remembers where argv lies, set_title() overwrites it.
#pragma once

namespace base {

void remember_argv(int argc, char** argv);
// Replace the whole argv area by `title` (truncated to fit) and NULs, and
// set the thread name (comm) to its first 15 bytes.
void set_title(const char* title);

}  // namespace base
