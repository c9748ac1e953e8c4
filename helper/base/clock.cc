#include "helper/base/clock.h"

#include <time.h>

#include <cstdio>

namespace base {

std::string utc_now_rfc3339() {
    time_t now = ::time(nullptr);
    struct tm tm;
    ::gmtime_r(&now, &tm);
    char buf[32];
    ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

int64_t parse_rfc3339(const std::string& s) {
    int y, mo, d, h, mi, sec;
    char tail = 0;
    if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &sec, &tail) != 7) return -1;
    if (tail != 'Z' && tail != '.') return -1;
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return -1;
    struct tm tm {};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    return static_cast<int64_t>(::timegm(&tm));
}

}  // namespace base
