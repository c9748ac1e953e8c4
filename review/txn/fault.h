// Fault injection for the atomicity tests (helper/base/fault.h holds the
// mechanism: LAYOVER_FAULT=PHASE:POINT:N[:kill|:stop]). The store's step
// operations (fork, rollback, freeze) reach the same points from below review.
#pragma once
#include "helper/base/fault.h"

namespace review {

inline base::Result<void> fault_point(const char* phase, const char* point) { return base::fault_point(phase, point); }

}  // namespace review
