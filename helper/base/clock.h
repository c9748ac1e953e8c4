// Wall-clock time as layover records it (meta.json, manifests).
#pragma once
#include <string>

namespace base {

// Now, in UTC, as RFC 3339 with second precision: 2026-11-25T10:59:40Z.
std::string utc_now_rfc3339();

}  // namespace base
