// `layover discard SESSION --rejected` (discard_rejected.cc).
#pragma once
#include "helper/store/session/session.h"

// Prints what it dropped; returns the exit status.
int discard_rejected(const session::Info& info);
