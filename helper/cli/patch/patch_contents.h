// `layover show SESSION|FILE --contents`: every file the patch writes, with
// its bytes, as one JSON object, read by layover from the captured layers
// (or the patch), never through anything the sandboxed program runs. The
// Python bindings' changed_files() reads it (docs/python.md).
#pragma once
#include "capture/patch/reader.h"
#include "helper/base/result.h"

// {"files":[{"path_b64":"...","data_b64":"..."},...]} on stdout, in
// archive order; a hard link member carries its target's bytes.
base::Result<void> print_patch_contents(const capture::Patch& p);
