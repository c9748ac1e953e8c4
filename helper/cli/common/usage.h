// A verb's usage error, one line: "layover: VERB: WHY; see 'layover VERB
// --help'" on stderr; returns 2 (the exit code for usage), or code (run's is
// 125: its other codes are the command's). Every verb's usage, unknown-option
// and operand errors are printed here (python/layover/_mcp_server.py prints
// mcp's in the same form).
#pragma once
#include <cstdio>
#include <string>
#include <string_view>

#include "helper/base/suggest.h"
#include "helper/base/text.h"

namespace cli {

inline int usage_error(const char* verb, const std::string& why, int code = 2) {
    std::fprintf(stderr, "layover: %s: %s; see 'layover %s --help'\n", verb, why.c_str(), verb);
    return code;
}

// "unknown option 'ARG'", with the flag of the verb's --help text (`usage`)
// it was likely meant to be: "(did you mean '--session'?)".
inline int unknown_option(const char* verb, std::string_view arg, std::string_view usage, int code = 2) {
    return usage_error(verb, "unknown option '" + base::display_path(arg) + "'" + base::did_you_mean(arg, usage), code);
}

}  // namespace cli
