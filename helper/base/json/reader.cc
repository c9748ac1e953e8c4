#include "helper/base/json/reader.h"

#include <limits>

namespace base::jsonread {

bool Number::to_unsigned(uint64_t max, uint64_t* out) const {
    if (cls == Cls::Unsigned && u <= max) *out = u;
    else if (cls == Cls::Signed && i == 0) *out = 0;  // "-0"
    else return false;
    return true;
}

bool Number::to_signed(int64_t* out) const {
    if (cls == Cls::Unsigned && u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
        *out = static_cast<int64_t>(u);
    else if (cls == Cls::Signed) *out = i;
    else return false;
    return true;
}

Parser::Parser(std::string_view text) : s_(text) {
    // A UTF-8 byte order mark is tolerated at the start, as nlohmann-json does.
    if (s_.substr(0, 3) == "\xEF\xBB\xBF") pos_ = 3;
}

bool Parser::fail() {
    ok_ = false;
    return false;
}

void Parser::ws() {
    while (pos_ < s_.size()) {
        char c = s_[pos_];
        if (c != ' ' && c != '\n' && c != '\t' && c != '\r') return;
        pos_++;
    }
}

Tok Parser::peek() {
    ws();
    if (!ok_ || pos_ >= s_.size()) return Tok::Bad;
    char c = s_[pos_];
    switch (c) {
        case '{': return Tok::Object;
        case '[': return Tok::Array;
        case '"': return Tok::String;
        case 't':
        case 'f': return Tok::Bool;
        case 'n': return Tok::Null;
        default: return c == '-' || (c >= '0' && c <= '9') ? Tok::Number : Tok::Bad;
    }
}

bool Parser::begin_object() {
    if (peek() != Tok::Object) return fail();
    pos_++;
    opened_ = true;
    return true;
}

bool Parser::begin_array() {
    if (peek() != Tok::Array) return fail();
    pos_++;
    opened_ = true;
    return true;
}

bool Parser::key_colon() {
    if (!string(&key_)) return false;
    ws();
    if (pos_ >= s_.size() || s_[pos_] != ':') return fail();
    pos_++;
    return true;
}

bool Parser::next_key(std::string_view* key) {
    bool first = opened_;
    opened_ = false;
    ws();
    if (!ok_ || pos_ >= s_.size()) return fail();
    if (s_[pos_] == '}') {
        pos_++;
        return false;
    }
    if (!first) {
        if (s_[pos_] != ',') return fail();
        pos_++;
    }
    if (!key_colon()) return false;
    *key = key_;
    return true;
}

bool Parser::next_item() {
    bool first = opened_;
    opened_ = false;
    ws();
    if (!ok_ || pos_ >= s_.size()) return fail();
    if (s_[pos_] == ']') {
        pos_++;
        return false;
    }
    if (!first) {
        if (s_[pos_] != ',') return fail();
        pos_++;
    }
    return true;
}

bool Parser::string(std::string* out) {
    if (peek() != Tok::String) return fail();
    pos_++;
    out->clear();
    return string_body(out);
}

bool Parser::string_body(std::string* out) {
    for (;;) {
        size_t run = pos_;
        while (pos_ < s_.size()) {
            unsigned char c = static_cast<unsigned char>(s_[pos_]);
            if (c < 0x20 || c >= 0x80 || c == '"' || c == '\\') break;
            pos_++;
        }
        out->append(s_.data() + run, pos_ - run);
        if (pos_ >= s_.size()) return fail();
        unsigned char c = static_cast<unsigned char>(s_[pos_]);
        if (c == '"') {
            pos_++;
            return true;
        }
        if (c == '\\') {
            if (!escape(out)) return false;
        } else if (c >= 0x80) {
            size_t start = pos_;
            if (!utf8_seq()) return false;
            out->append(s_.data() + start, pos_ - start);
        } else {
            return fail();  // a raw control character
        }
    }
}

bool Parser::hex4(uint32_t* out) {
    if (pos_ + 4 > s_.size()) return fail();
    uint32_t v = 0;
    for (int k = 0; k < 4; k++) {
        char c = s_[pos_++];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= static_cast<uint32_t>(c - '0');
        else if (c >= 'a' && c <= 'f') v |= static_cast<uint32_t>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= static_cast<uint32_t>(c - 'A' + 10);
        else return fail();
    }
    *out = v;
    return true;
}

bool Parser::escape(std::string* out) {
    pos_++;  // the backslash
    if (pos_ >= s_.size()) return fail();
    char c = s_[pos_++];
    switch (c) {
        case '"': out->push_back('"'); return true;
        case '\\': out->push_back('\\'); return true;
        case '/': out->push_back('/'); return true;
        case 'b': out->push_back('\b'); return true;
        case 'f': out->push_back('\f'); return true;
        case 'n': out->push_back('\n'); return true;
        case 'r': out->push_back('\r'); return true;
        case 't': out->push_back('\t'); return true;
        case 'u': break;
        default: return fail();
    }
    uint32_t cp;
    if (!hex4(&cp)) return false;
    if (cp >= 0xDC00 && cp <= 0xDFFF) return fail();  // a lone low surrogate
    if (cp >= 0xD800 && cp <= 0xDBFF) {
        uint32_t low;
        if (s_.substr(pos_, 2) != "\\u") return fail();
        pos_ += 2;
        if (!hex4(&low)) return false;
        if (low < 0xDC00 || low > 0xDFFF) return fail();
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
        out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
    return true;
}

// One well-formed UTF-8 sequence (RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF).
bool Parser::utf8_seq() {
    auto at = [&](size_t k) { return static_cast<unsigned char>(s_[pos_ + k]); };
    unsigned char c0 = at(0), lo = 0x80, hi = 0xBF;
    size_t len;
    if (c0 >= 0xC2 && c0 <= 0xDF) len = 2;
    else if (c0 == 0xE0) len = 3, lo = 0xA0;
    else if ((c0 >= 0xE1 && c0 <= 0xEC) || c0 == 0xEE || c0 == 0xEF) len = 3;
    else if (c0 == 0xED) len = 3, hi = 0x9F;
    else if (c0 == 0xF0) len = 4, lo = 0x90;
    else if (c0 >= 0xF1 && c0 <= 0xF3) len = 4;
    else if (c0 == 0xF4) len = 4, hi = 0x8F;
    else return fail();
    if (pos_ + len > s_.size()) return fail();
    if (at(1) < lo || at(1) > hi) return fail();
    for (size_t k = 2; k < len; k++)
        if (at(k) < 0x80 || at(k) > 0xBF) return fail();
    pos_ += len;
    return true;
}

bool Parser::number(Number* out) {
    if (peek() != Tok::Number) return fail();
    auto digit = [&] { return pos_ < s_.size() && s_[pos_] >= '0' && s_[pos_] <= '9'; };
    bool neg = s_[pos_] == '-';
    if (neg) pos_++;
    if (!digit()) return fail();
    uint64_t mag = 0;
    bool overflow = false;
    if (s_[pos_] == '0') {
        pos_++;
    } else {
        while (digit()) {
            uint64_t d = static_cast<uint64_t>(s_[pos_++] - '0');
            if (mag > (std::numeric_limits<uint64_t>::max() - d) / 10) overflow = true;
            else mag = mag * 10 + d;
        }
    }
    bool real = false;
    if (pos_ < s_.size() && s_[pos_] == '.') {
        pos_++;
        if (!digit()) return fail();
        while (digit()) pos_++;
        real = true;
    }
    if (pos_ < s_.size() && (s_[pos_] == 'e' || s_[pos_] == 'E')) {
        pos_++;
        if (pos_ < s_.size() && (s_[pos_] == '+' || s_[pos_] == '-')) pos_++;
        if (!digit()) return fail();
        while (digit()) pos_++;
        real = true;
    }
    *out = Number();
    if (real || overflow) return true;  // Float
    if (!neg) {
        out->cls = Number::Cls::Unsigned;
        out->u = mag;
    } else if (mag <= uint64_t{1} << 63) {
        out->cls = Number::Cls::Signed;
        out->i = mag == uint64_t{1} << 63 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(mag);
    }
    return true;
}

bool Parser::literal(std::string_view word) {
    if (s_.substr(pos_, word.size()) != word) return fail();
    pos_ += word.size();
    return true;
}

bool Parser::boolean(bool* out) {
    if (peek() != Tok::Bool) return fail();
    *out = s_[pos_] == 't';
    return literal(*out ? "true" : "false");
}

bool Parser::null() {
    if (peek() != Tok::Null) return fail();
    return literal("null");
}

// Iterative, so that no nesting depth can exhaust the stack.
bool Parser::skip() {
    std::string open;  // the '{' / '[' of the containers being skipped
    for (;;) {
        switch (peek()) {
            case Tok::Object:
            case Tok::Array: {
                char c = s_[pos_++];
                char close = c == '{' ? '}' : ']';
                ws();
                if (pos_ < s_.size() && s_[pos_] == close) {
                    pos_++;
                    break;
                }
                open.push_back(c);
                if (c == '{' && !key_colon()) return false;
                continue;  // its first value
            }
            case Tok::String:
                if (!string(&scratch_)) return false;
                break;
            case Tok::Number: {
                Number n;
                if (!number(&n)) return false;
                break;
            }
            case Tok::Bool: {
                bool b;
                if (!boolean(&b)) return false;
                break;
            }
            case Tok::Null:
                if (!null()) return false;
                break;
            case Tok::Bad: return fail();
        }
        // After a value: close what ends here, or go on to the next value.
        for (;;) {
            if (open.empty()) return true;
            ws();
            if (pos_ >= s_.size()) return fail();
            char c = s_[pos_++];
            if (c == ',') {
                if (open.back() == '{' && !key_colon()) return false;
                break;
            }
            if (c != (open.back() == '{' ? '}' : ']')) return fail();
            open.pop_back();
        }
    }
}

bool Parser::finish() {
    ws();
    if (!ok_ || pos_ != s_.size()) return fail();
    return true;
}

}  // namespace base::jsonread
