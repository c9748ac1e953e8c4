#include <string>
#include <string_view>

#include "helper/base/glob.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

// Input: PATTERN \0 PATH (a missing \0: the path is the pattern).
int glob(const uint8_t* data, size_t size) {
    std::string_view in(reinterpret_cast<const char*>(data), size);
    auto nul = in.find('\0');
    std::string_view pat = in.substr(0, nul), path = nul == std::string_view::npos ? in : in.substr(nul + 1);
    bool m = base::glob_match(pat, path);
    // A pattern without special bytes matches exactly itself.
    if (pat.find_first_of("*?[\\") == std::string_view::npos && m != (pat == path)) __builtin_trap();
    (void)base::path_is_under(path, pat);
    base::PathFilter f({std::string(pat)}, {std::string(pat)});
    (void)f.selects(path);
    (void)f.needed(path);
    (void)f.excluded(path);
    (void)f.selects_strictly_beneath(path);
    (void)base::normalize_rel(path);
    return 0;
}

}  // namespace fuzz
