#include "capture/json_text.h"

#include <charconv>

#include "helper/base/text.h"

namespace capture::jsontext {

namespace {

constexpr char kHex[] = "0123456789abcdef";

void escaped(std::string* out, std::string_view s) {
    out->push_back('"');
    size_t run = 0;  // start of the pending run of bytes needing no escape
    for (size_t i = 0; i < s.size(); i++) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\') continue;
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

void key(std::string* out, std::string_view k) {
    escaped(out, k);
    *out += ": ";
}

void type_or_null(std::string* out, Type t) {
    if (t == Type::None) *out += "null";
    else str(out, type_name(t));
}

}  // namespace

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
    escaped(out, base::base64_encode(raw));
}

void change(std::string* out, const Change& c, bool full) {
    *out += "{";
    field_bytes(out, "path", c.path);
    *out += ", \"kind\": ";
    str(out, kind_name(c.kind));
    *out += ", \"type\": ";
    type_or_null(out, c.type);
    *out += ", \"size\": ";
    num(out, c.size);
    *out += ", \"mode\": ";
    num(out, c.mode);
    *out += ", \"old_type\": ";
    type_or_null(out, c.old_type);
    *out += ", \"old_mode\": ";
    num(out, c.old_mode);
    *out += ", ";
    if (c.type == Type::Symlink) field_bytes(out, "link_target", c.link_target);
    else *out += "\"link_target\": null";
    *out += c.captured ? ", \"captured\": true" : ", \"captured\": false";
    if (full) {
        *out += ", \"mtime_ns\": ";
        num_signed(out, c.mtime_ns);
        *out += ", \"xattrs\": [";
        bool first = true;
        for (const auto& [name, value] : c.xattrs) {
            *out += first ? "{" : ", {";
            first = false;
            field_bytes(out, "name", name);
            *out += ", \"value_b64\": ";
            escaped(out, base::base64_encode(value));
            *out += "}";
        }
        *out += "]";
    }
    *out += "}";
}

void base_entry(std::string* out, const BaseEntry& b) {
    *out += "{";
    field_bytes(out, "path", b.path);
    if (b.absent) {
        *out += ", \"absent\": true}";
        return;
    }
    *out += ", \"type\": ";
    str(out, type_name(b.type));
    *out += ", \"size\": ";
    num(out, b.size);
    *out += ", \"mode\": ";
    num(out, b.mode);
    *out += ", \"fingerprint\": ";
    if (b.fingerprint.empty()) *out += "null";
    else str(out, b.fingerprint);
    *out += b.stale ? ", \"stale\": true}" : ", \"stale\": false}";
}

}  // namespace capture::jsontext
