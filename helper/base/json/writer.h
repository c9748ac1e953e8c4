// JSON text written directly, without building a document tree: the manifest,
// the sums and `status --json` list one object per change, and a tree of
// 20,000 small objects cost more to build and free than the walk that found
// them. Output follows the byte-string encoding of docs/patch-format.md.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace base::json {

// A JSON string literal. Text that is not valid UTF-8 is written in its
// display-escaped form (see field_bytes for lossless byte strings).
void str(std::string* out, std::string_view s);
void num(std::string* out, uint64_t v);
void num_signed(std::string* out, int64_t v);

// `"key": "..."`, plus `"key_b64": "..."` holding the exact bytes when raw is
// not valid UTF-8 (then "key" holds the display form). No leading comma.
void field_bytes(std::string* out, std::string_view key, std::string_view raw);

// `"key": ` (escaped), for callers writing their own objects.
void key(std::string* out, std::string_view k);

}  // namespace base::json
