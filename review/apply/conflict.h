// Conflict rules (pure): does the real entry still match the patch's `base`
// record? Used by apply (against the patch) and by undo (against the record
// of what apply wrote).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "capture/scan/entry/change.h"
#include "review/apply/apply.h"

namespace review {

// A permission mode as four octal digits (0644, 4755): for listings and conflicts.
std::string mode_octal(uint32_t mode);

// What is on the real filesystem now at one path.
struct Observed {
    std::string path;
    bool exists = false;
    capture::Type type = capture::Type::None;
    uint32_t mode = 0;  // permission bits
    uint64_t size = 0;
    std::string fingerprint;  // filled only when needs_fingerprint() said so
};

// True when types (and, for files, sizes) agree and base has a fingerprint,
// so only hashing can tell: callers hash lazily, only then.
bool needs_fingerprint(const capture::BaseEntry& base, const Observed& real);

// "" when the real entry matches base; otherwise a one-line reason.
std::string compare_entry(const capture::BaseEntry& base, const Observed& real);

// A deleted or replaced directory: every real entry beneath `dir` must be in
// base and match it, and every base entry beneath it must still exist.
// `base_under` and `real_under` hold only entries strictly beneath `dir`.
std::vector<Conflict> compare_subtree(const std::vector<capture::BaseEntry>& base_under,
                                      const std::vector<Observed>& real_under);

}  // namespace review
