// `layover show FILE --steps` and `layover log FILE`: the step records a
// patch carries (docs/history.md "Records in patches"), as `log` shows a
// session's, without the layers. Labels and paths come from the patch, so
// from whoever wrote it: every one is printed escaped.
#pragma once
#include "capture/patch/reader.h"

// Prints the history (JSON with `json`); returns the exit code.
int print_patch_steps(const capture::Patch& p, bool json);
