// When output gets colors, bold and progress bars: only on a terminal, never
// with TERM=dumb, and never when NO_COLOR is set (https://no-color.org),
// unless the command line asks for them (--color=always wins, as the
// convention says a per-invocation flag should).
#pragma once
#include <string>

namespace base {

enum class ColorWhen { Auto, Always, Never };

// Parse auto|always|never; false for anything else.
bool parse_color_when(const std::string& s, ColorWhen* out);

// Pure: the decision for a destination that is (or is not) a terminal, given
// $NO_COLOR and $TERM (nullptr when unset).
bool decide_color(ColorWhen when, bool is_tty, const char* no_color, const char* term);

// The decision for fd (1 or 2) from the real environment.
bool color_for_fd(int fd, ColorWhen when = ColorWhen::Auto);

// Progress bars and other redrawn lines: a terminal that is not "dumb".
// NO_COLOR does not turn them off (they hold no color), but a pipe or a
// file always does: `make demo > log` must hold no carriage returns.
bool live_output(int fd);

}  // namespace base
