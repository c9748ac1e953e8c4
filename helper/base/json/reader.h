// A strict JSON pull parser (RFC 8259: UTF-8 checked, surrogate pairs
// matched, no trailing commas, nothing after the top value) that reads the
// manifest and the sums straight into their structs: a document tree of
// 20,000 small objects cost more to build and free than reading the rest of
// a patch. Syntax errors stick: after one, every call fails and ok() is false.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace base::jsonread {

enum class Tok { Object, Array, String, Number, Bool, Null, Bad };

// A number as nlohmann-json classifies it: integers without fraction or
// exponent that fit (unsigned when there is no '-'), anything else Float.
struct Number {
    enum class Cls { Unsigned, Signed, Float } cls = Cls::Float;
    uint64_t u = 0;
    int64_t i = 0;
    // The value as an integer of [0, max] / of int64; false for a Float or
    // out of range (nlohmann would have cast it silently).
    bool to_unsigned(uint64_t max, uint64_t* out) const;
    bool to_signed(int64_t* out) const;
};

class Parser {
public:
    explicit Parser(std::string_view text);

    bool ok() const { return ok_; }
    size_t pos() const { return pos_; }
    // What the next value is (whitespace skipped); Bad at the end or on error.
    Tok peek();

    // Objects: begin_object() consumes '{'; then while (next_key(&k)) read
    // or skip one value. next_key returns false at '}' (ok) or on an error.
    // The key view lives until the next call.
    bool begin_object();
    bool next_key(std::string_view* key);
    // Arrays: begin_array(), then while (next_item()) read or skip one value.
    bool begin_array();
    bool next_item();

    bool string(std::string* out);  // replaces *out with the decoded bytes
    bool number(Number* out);
    bool boolean(bool* out);
    bool null();
    bool skip();    // any one value, checked as strictly as the rest
    bool finish();  // only whitespace may follow the top value

private:
    bool fail();
    void ws();
    bool literal(std::string_view word);
    bool string_body(std::string* out);
    bool escape(std::string* out);
    bool hex4(uint32_t* out);
    bool utf8_seq();
    bool key_colon();

    std::string_view s_;
    size_t pos_ = 0;
    bool ok_ = true;
    bool opened_ = false;  // a container was just opened: no comma before its first item
    std::string key_;      // the current key, decoded
    std::string scratch_;  // strings skip() reads past
};

}  // namespace base::jsonread
