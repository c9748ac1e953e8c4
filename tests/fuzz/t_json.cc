#include <string>

#include "capture/patch/manifest.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

int json(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto m = capture::manifest_from_text(text);
    if (m.ok()) {
        // What it read writes back and reads again the same.
        auto again = capture::manifest_from_text(capture::manifest_to_text(m.value()));
        if (!again.ok() || again->changes.size() != m->changes.size() || again->base.size() != m->base.size() ||
            again->target != m->target)
            __builtin_trap();
    }
    (void)capture::sums_from_text(text);
    return 0;
}

}  // namespace fuzz
