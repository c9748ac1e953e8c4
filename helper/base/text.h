// Pure text helpers shared by every verb: path display escaping, lossless
// JSON encoding of byte-string names, and validation of session names.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace base {

// True when s is well-formed UTF-8.
bool is_utf8(std::string_view s);

// A path as shown to a person: unchanged when it is printable UTF-8 without
// quotes or backslashes; otherwise wrapped in double quotes with C escapes
// (\n, \t, \\, \", \xNN for control bytes and invalid UTF-8), as git does.
std::string display_path(std::string_view raw);

// Make control bytes in arbitrary text visible (^[, ^M, M-x style): for
// terminal output only, never for piped output.
std::string caret_escape(std::string_view raw, bool keep_newlines);

std::string base64_encode(std::string_view raw);
bool base64_decode(std::string_view text, std::string* out);

// 1234567 -> "1,234,567": counts a person reads.
std::string thousands(unsigned long long n);

// Session names: [A-Za-z0-9._-]{1,64}, and not "." or "..".
bool valid_session_name(std::string_view name);

}  // namespace base
