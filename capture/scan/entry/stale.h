// A stale copy: the real entry changed after the sandbox copied it up (its
// ctime is later than the copy-up, or in the same tick of the coarse clock),
// unless its content is one a partial
// apply of this session left or found (helper/store/records/known_bases.h). save's
// base records and status's marks both decide it here.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "helper/store/records/known_bases.h"

namespace capture {

// fingerprint: the real entry's (capture/scan/entry/fingerprint.h), asked for only
// when the ctime says stale and `known` holds the path; "" when unknown.
bool stale_copy(const std::string& path, int64_t real_ctime_ns, int64_t copied_ns, uint32_t mode,
                const session::KnownBasesOnce* known, const std::function<std::string()>& fingerprint);

}  // namespace capture
