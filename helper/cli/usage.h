// A verb's usage error, one line: "layover: VERB: WHY; see 'layover VERB
// --help'" on stderr; returns 2 (the exit code for usage), or code (run's is
// 125: its other codes are the command's). Every verb's usage, unknown-option
// and operand errors are printed here (python/layover/_mcp_server.py prints
// mcp's in the same form).
#pragma once
#include <cstdio>
#include <string>

namespace cli {

inline int usage_error(const char* verb, const std::string& why, int code = 2) {
    std::fprintf(stderr, "layover: %s: %s; see 'layover %s --help'\n", verb, why.c_str(), verb);
    return code;
}

}  // namespace cli
