// The strict field readers the manifest's and the sums' parsers share
// (manifest_read.cc, sums_read.cc): lossless byte strings, typed fields, and
// the duplicate-key and first-problem bookkeeping of one record. Private to
// capture/patch.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

#include "capture/patch/manifest.h"
#include "helper/base/json/reader.h"
#include "helper/base/text.h"

namespace capture::fields {

using base::jsonread::Number;
using base::jsonread::Parser;
using base::jsonread::Tok;

// The first problem of one record, by rank (lower ranks are checked first).
struct Problem {
    int rank = std::numeric_limits<int>::max();
    std::string what;
    void add(int r, std::string w) {
        if (r < rank) rank = r, what = std::move(w);
    }
    bool any() const { return rank != std::numeric_limits<int>::max(); }
};

// One lossless byte string: "key", or "key_b64" (preferred) when present.
struct Bytes {
    bool has_text = false, text_ok = false, has_b64 = false, b64_ok = false;
    std::string b64;
    // A value of "key" (into *text: 1) or of "key_b64" (2); 0 if k is neither.
    int read(Parser& p, std::string_view k, std::string_view name, std::string* text) {
        if (k == name) {
            has_text = true;
            text_ok = p.peek() == Tok::String ? p.string(text) : (p.skip(), false);
            return 1;
        }
        if (k.size() == name.size() + 4 && k.substr(0, name.size()) == name && k.substr(name.size()) == "_b64") {
            has_b64 = true;
            b64_ok = p.peek() == Tok::String ? p.string(&b64) : (p.skip(), false);
            return 2;
        }
        return 0;
    }
    // The bytes, into *text where "key" was read.
    bool get(std::string* text) const {
        if (has_b64) return b64_ok && base::base64_decode(b64, text);
        return has_text && text_ok;
    }
};

// A string field: absent, a string, or something else.
enum class Field { Absent, Ok, Bad };

inline Field read_string(Parser& p, std::string* out) {
    if (p.peek() == Tok::String) return p.string(out) ? Field::Ok : Field::Bad;
    p.skip();
    return Field::Bad;
}

// "type"/"old_type": absent or null mean None.
inline bool read_type(Parser& p, Type* out, std::string* scratch) {
    Tok t = p.peek();
    if (t == Tok::Null) return p.null();
    if (t == Tok::String && p.string(scratch)) return parse_type(*scratch, out);
    p.skip();
    return false;
}

// An integer field of an unsigned type (or int64 when is_signed).
template <class T>
inline bool read_int(Parser& p, T* out) {
    Number n;
    if (p.peek() != Tok::Number) {
        p.skip();
        return false;
    }
    if (!p.number(&n)) return false;
    if constexpr (std::is_signed_v<T>) {
        int64_t v;
        if (!n.to_signed(&v)) return false;
        *out = static_cast<T>(v);
    } else {
        uint64_t v;
        if (!n.to_unsigned(std::numeric_limits<T>::max(), &v)) return false;
        *out = static_cast<T>(v);
    }
    return true;
}

inline bool read_bool(Parser& p, bool* out) {
    if (p.peek() == Tok::Bool) return p.boolean(out);
    p.skip();
    return false;
}

// A key seen twice in one object: nlohmann kept the last silently; a patch
// whose fields can be read two ways is refused instead.
struct Seen {
    uint32_t bits = 0;
    std::string twice;
    void mark(unsigned bit, std::string_view key) {
        if ((bits & (1u << bit)) != 0 && twice.empty()) twice = key;
        bits |= 1u << bit;
    }
};

}  // namespace capture::fields
