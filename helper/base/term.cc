#include "helper/base/term.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace base {

bool parse_color_when(const std::string& s, ColorWhen* out) {
    if (s == "auto") *out = ColorWhen::Auto;
    else if (s == "always") *out = ColorWhen::Always;
    else if (s == "never") *out = ColorWhen::Never;
    else return false;
    return true;
}

bool decide_color(ColorWhen when, bool is_tty, const char* no_color, const char* term) {
    if (when != ColorWhen::Auto) return when == ColorWhen::Always;
    if (!is_tty) return false;
    if (no_color && *no_color) return false;  // set and non-empty, whatever its value
    return !(term && std::strcmp(term, "dumb") == 0);
}

bool color_for_fd(int fd, ColorWhen when) {
    return decide_color(when, ::isatty(fd) == 1, std::getenv("NO_COLOR"), std::getenv("TERM"));
}

bool live_output(int fd) {
    const char* term = std::getenv("TERM");
    return ::isatty(fd) == 1 && !(term && std::strcmp(term, "dumb") == 0);
}

}  // namespace base
