// Pure text helpers shared by every verb: path display escaping, lossless
// JSON encoding of byte-string names, and validation of session names.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace base {

// True when s is well-formed UTF-8.
bool is_utf8(std::string_view s);

// The length of the valid UTF-8 sequence at s[i] (1 for ASCII), or 0 when
// it is invalid; *cp gets its code point.
size_t utf8_at(std::string_view s, size_t i, uint32_t* cp);

// Code points that change how a terminal draws what follows, or draw as
// nothing, though they are valid UTF-8: C1 controls (U+0080-U+009F; U+009B
// is a CSI on many terminals), the line and paragraph separators U+2028,
// U+2029, and Unicode's default-ignorable code points: bidi embeddings,
// overrides, isolates and marks (U+202A-U+202E, U+2066-U+2069, U+200E,
// U+200F, U+061C), zero-width characters (U+200B-U+200D, U+2060, U+FEFF),
// soft hyphen, variation selectors, fillers and the tag characters
// U+E0000-U+E0FFF. Never printed raw.
bool is_unsafe_codepoint(uint32_t cp);

// Appends cp as \uXXXX, or \UXXXXXXXX past U+FFFF.
void append_codepoint_escape(std::string* out, uint32_t cp);

// A path as shown to a person: unchanged when it is printable UTF-8 without
// quotes or backslashes and neither starts nor ends with a space; otherwise
// wrapped in double quotes with C escapes
// (\n, \t, \\, \", \xNN for control bytes and invalid UTF-8, \uXXXX for the
// unsafe code points above), as git's core.quotePath does, extended to C1
// and bidi controls. No raw control byte ever comes out.
std::string display_path(std::string_view raw);

// Bytes as lowercase hex digits, two a byte (the state files' form of a raw
// path), and back: false for an odd length or a non-hex digit.
std::string to_hex(std::string_view raw);
bool from_hex(std::string_view hex, std::string* out);

// An absolute path cleaned lexically: no "//", no "." component, no
// trailing "/" ("/" for none). A ".." is kept as it is: only the filesystem
// can say where it leads (symlinks).
std::string clean_path(std::string_view abs);

// *out += display_path(raw), without its copy for the common name that needs
// no escaping (printable ASCII): for listings of many names.
void append_display_path(std::string* out, std::string_view raw);

// Make control bytes in arbitrary text visible (^[, ^M, M-x style): for
// terminal output only, never for piped output.
std::string caret_escape(std::string_view raw, bool keep_newlines);

std::string base64_encode(std::string_view raw);
bool base64_decode(std::string_view text, std::string* out);

// 1234567 -> "1,234,567": counts a person reads.
std::string thousands(unsigned long long n);

// Sizes a person reads, in powers of 1024, one way everywhere:
//   bytes_text: "512 B", "2.0 KiB", "38 MiB" (one decimal below 10), for prose;
//   bytes_short: "512B", "4K", "9.2M", the `--max-size` syntax, for columns
//   and limit messages (a decimal only when not a whole number).
std::string bytes_text(uint64_t n);
std::string bytes_short(uint64_t n);

// Session names: [A-Za-z0-9._-]{1,64}, and not "." or "..".
bool valid_session_name(std::string_view name);

// A leading "~/" of a path no shell expanded (`--on-exit save:~/FILE`, the
// prompt's answer) becomes `home`'s, when home is absolute; else unchanged.
std::string expand_home(const std::string& path, const char* home);

}  // namespace base
