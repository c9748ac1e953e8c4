#include "helper/base/clock.h"

#include <time.h>

namespace base {

std::string utc_now_rfc3339() {
    time_t now = ::time(nullptr);
    struct tm tm;
    ::gmtime_r(&now, &tm);
    char buf[32];
    ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace base
