#include "helper/base/json/writer.h"

#include <charconv>

#include "helper/base/text.h"

namespace base::json {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void append_u(std::string* out, uint32_t unit) {
    *out += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out->push_back(kHex[(unit >> shift) & 15]);
}

void escaped(std::string* out, std::string_view s) {
    out->push_back('"');
    size_t run = 0;  // start of the pending run of bytes needing no escape
    for (size_t i = 0; i < s.size(); i++) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x80) {
            // Valid UTF-8 passes, except the code points that steer a
            // terminal (C1, bidi): \uXXXX keeps a JSON dump inert on a tty.
            uint32_t cp = 0;
            size_t n = base::utf8_at(s, i, &cp);
            if (n < 2 || !base::is_unsafe_codepoint(cp)) continue;
            out->append(s.data() + run, i - run);
            if (cp > 0xFFFF) {  // a JSON \u escape is UTF-16: a surrogate pair
                append_u(out, 0xD800 + ((cp - 0x10000) >> 10));
                cp = 0xDC00 + ((cp - 0x10000) & 0x3FF);
            }
            append_u(out, cp);
            i += n - 1;
            run = i + 1;
            continue;
        }
        if (c >= 0x20 && c != 0x7F && c != '"' && c != '\\') continue;
        out->append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
            case '"': *out += "\\\""; break;
            case '\\': *out += "\\\\"; break;
            case '\n': *out += "\\n"; break;
            case '\t': *out += "\\t"; break;
            case '\r': *out += "\\r"; break;
            case '\b': *out += "\\b"; break;
            case '\f': *out += "\\f"; break;
            default:
                *out += "\\u00";
                out->push_back(kHex[c >> 4]);
                out->push_back(kHex[c & 15]);
        }
    }
    out->append(s.data() + run, s.size() - run);
    out->push_back('"');
}

}  // namespace

void key(std::string* out, std::string_view k) {
    escaped(out, k);
    *out += ": ";
}

void str(std::string* out, std::string_view s) {
    if (base::is_utf8(s)) escaped(out, s);
    else escaped(out, base::display_path(s));
}

void num(std::string* out, uint64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out->append(buf, r.ptr);
}

void num_signed(std::string* out, int64_t v) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof buf, v);
    out->append(buf, r.ptr);
}

void field_bytes(std::string* out, std::string_view k, std::string_view raw) {
    key(out, k);
    if (base::is_utf8(raw)) {
        escaped(out, raw);
        return;
    }
    escaped(out, base::display_path(raw));
    *out += ", ";
    key(out, std::string(k) + "_b64");
    escaped(out, base64_encode(raw));
}

}  // namespace base::json
