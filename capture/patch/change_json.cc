#include "capture/patch/change_json.h"

#include "helper/base/json/writer.h"
#include "helper/base/text.h"

namespace capture::jsontext {

using base::json::field_bytes;
using base::json::num;
using base::json::num_signed;
using base::json::str;

namespace {

void type_or_null(std::string* out, Type t) {
    if (t == Type::None) *out += "null";
    else str(out, type_name(t));
}

}  // namespace

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
    if (c.ignored) *out += ", \"ignored\": true";  // --include-ignored brought it in
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
            str(out, base::base64_encode(value));
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
