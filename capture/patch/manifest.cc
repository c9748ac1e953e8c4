#include "capture/patch/manifest.h"

#include "capture/patch/change_json.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"

namespace capture {

namespace {

json type_json(Type t) { return t == Type::None ? json(nullptr) : json(type_name(t)); }

}  // namespace

void put_bytes(json& j, const std::string& key, const std::string& raw) {
    if (base::is_utf8(raw)) {
        j[key] = raw;
    } else {
        j[key] = base::display_path(raw);
        j[key + "_b64"] = base::base64_encode(raw);
    }
}

bool get_bytes(const json& j, const std::string& key, std::string* out) {
    auto b = j.find(key + "_b64");
    if (b != j.end()) return b->is_string() && base::base64_decode(b->get<std::string>(), out);
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    *out = it->get<std::string>();
    return true;
}

json change_to_json(const Change& c, bool full) {
    json j = json::object();
    put_bytes(j, "path", c.path);
    j["kind"] = kind_name(c.kind);
    j["type"] = type_json(c.type);
    j["size"] = c.size;
    j["mode"] = c.mode;
    j["old_type"] = type_json(c.old_type);
    j["old_mode"] = c.old_mode;
    if (c.type == Type::Symlink)
        put_bytes(j, "link_target", c.link_target);
    else
        j["link_target"] = nullptr;
    j["captured"] = c.captured;
    if (full) {
        j["mtime_ns"] = c.mtime_ns;
        json xs = json::array();
        for (const auto& [name, value] : c.xattrs) {
            json x = json::object();
            put_bytes(x, "name", name);
            x["value_b64"] = base::base64_encode(value);
            xs.push_back(std::move(x));
        }
        j["xattrs"] = std::move(xs);
    }
    return j;
}

json base_to_json(const BaseEntry& b) {
    json j = json::object();
    put_bytes(j, "path", b.path);
    if (b.absent) {
        j["absent"] = true;
        return j;
    }
    j["type"] = type_name(b.type);
    j["size"] = b.size;
    j["mode"] = b.mode;
    j["fingerprint"] = b.fingerprint.empty() ? json(nullptr) : json(b.fingerprint);
    j["stale"] = b.stale;
    return j;
}

std::string changes_to_json_text(const std::vector<Change>& changes) {
    if (changes.empty()) return "[]\n";
    std::string out;
    out.reserve(changes.size() * 160);
    for (const auto& c : changes) {
        out += out.empty() ? "[\n  " : ",\n  ";
        jsontext::change(&out, c, false);
    }
    out += "\n]\n";
    return out;
}

std::string manifest_to_text(const Manifest& m) {
    using namespace jsontext;
    using namespace base::json;
    std::string out;
    out.reserve(512 + m.changes.size() * 220 + m.base.size() * 120);
    out += "{\"format\": ";
    str(&out, m.format);
    out += ",\n ";
    field_bytes(&out, "target", m.target);
    out += ",\n \"session\": ";
    str(&out, m.session);
    out += ",\n \"command\": [";
    for (size_t i = 0; i < m.command.size(); i++) {
        if (i) out += ", ";
        // Arguments are bytes too; keep them lossless.
        if (base::is_utf8(m.command[i])) {
            str(&out, m.command[i]);
        } else {
            out += "{";
            field_bytes(&out, "arg", m.command[i]);
            out += "}";
        }
    }
    out += "],\n \"created\": ";
    str(&out, m.created);
    out += ",\n \"version\": ";
    str(&out, m.version);
    if (!m.kind.empty()) {
        out += ",\n \"kind\": ";
        str(&out, m.kind);
    }
    if (!m.undo_store.empty()) {
        out += ",\n \"undo_store\": ";
        str(&out, m.undo_store);
    }
    out += ",\n \"changes\": [";
    for (size_t i = 0; i < m.changes.size(); i++) {
        out += i ? ",\n  " : "\n  ";
        change(&out, m.changes[i], true);
    }
    out += "],\n \"base\": [";
    for (size_t i = 0; i < m.base.size(); i++) {
        out += i ? ",\n  " : "\n  ";
        base_entry(&out, m.base[i]);
    }
    out += "]\n}\n";
    return out;
}

}  // namespace capture
