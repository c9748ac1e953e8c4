// Fault injection for the atomicity tests: LAYOVER_FAULT=PHASE:POINT:N[:kill]
// makes the N-th arrival at fault_point(PHASE, POINT) fail with EIO (or, with
// ":kill", SIGKILL the process; with ":stop", stop it with SIGSTOP and go on
// when continued), e.g. apply:commit:3:kill; several specs are separated by
// commas. Unset: no effect.
#pragma once
#include "helper/base/result.h"

namespace base {

base::Result<void> fault_point(const char* phase, const char* point);

}  // namespace base
