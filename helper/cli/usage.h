// A verb's usage error, one line: "layover: VERB: WHY; see 'layover VERB
// --help'" on stderr; returns 2 (the exit code for usage).
#pragma once
#include <cstdio>
#include <string>

namespace cli {

inline int usage_error(const char* verb, const std::string& why) {
    std::fprintf(stderr, "layover: %s: %s; see 'layover %s --help'\n", verb, why.c_str(), verb);
    return 2;
}

}  // namespace cli
