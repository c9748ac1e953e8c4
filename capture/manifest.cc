#include "capture/manifest.h"

#include "capture/json_text.h"
#include "helper/base/text.h"

namespace capture {

namespace {

json type_json(Type t) { return t == Type::None ? json(nullptr) : json(type_name(t)); }

bool type_from(const json& j, const char* key, Type* out) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) {
        *out = Type::None;
        return true;
    }
    return it->is_string() && parse_type(it->get<std::string>(), out);
}

template <class T>
bool num(const json& j, const char* key, T* out) {
    auto it = j.find(key);
    if (it == j.end()) return true;  // optional, stays default
    if (!it->is_number_integer()) return false;
    *out = it->get<T>();
    return true;
}

base::Error bad(const std::string& what) { return base::error("invalid manifest: " + what); }

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

base::Result<Change> change_from_json(const json& j) {
    if (!j.is_object()) return bad("a change is not an object");
    Change c;
    if (!get_bytes(j, "path", &c.path)) return bad("a change has no valid path");
    std::string where = "change " + base::display_path(c.path) + ": ";
    if (!j.contains("kind") || !j["kind"].is_string() || !parse_kind(j["kind"].get<std::string>(), &c.kind))
        return bad(where + "unknown kind");
    if (!type_from(j, "type", &c.type) || !type_from(j, "old_type", &c.old_type))
        return bad(where + "unknown type");
    if (!num(j, "size", &c.size) || !num(j, "mode", &c.mode) || !num(j, "old_mode", &c.old_mode) ||
        !num(j, "mtime_ns", &c.mtime_ns))
        return bad(where + "a number field is not an integer");
    if (c.type == Type::Symlink && !get_bytes(j, "link_target", &c.link_target))
        return bad(where + "a symlink without a target");
    auto cap = j.find("captured");
    if (cap != j.end()) {
        if (!cap->is_boolean()) return bad(where + "captured is not a boolean");
        c.captured = cap->get<bool>();
    }
    auto xs = j.find("xattrs");
    if (xs != j.end()) {
        if (!xs->is_array()) return bad(where + "xattrs is not an array");
        for (const auto& x : *xs) {
            std::string name, value;
            if (!x.is_object() || !get_bytes(x, "name", &name) || !x.contains("value_b64") ||
                !x["value_b64"].is_string() || !base::base64_decode(x["value_b64"].get<std::string>(), &value))
                return bad(where + "an invalid xattr");
            // Same rule as the payload's: a patch carries only user.* xattrs.
            if (name.compare(0, 5, "user.") != 0)
                return bad(where + "carries xattr " + base::display_path(name) + "; patches hold only user.* xattrs");
            if (!c.xattrs.emplace(name, value).second)
                return bad(where + "lists xattr " + base::display_path(name) + " twice");
        }
    }
    return c;
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

base::Result<BaseEntry> base_from_json(const json& j) {
    if (!j.is_object()) return bad("a base record is not an object");
    BaseEntry b;
    if (!get_bytes(j, "path", &b.path)) return bad("a base record has no valid path");
    std::string where = "base " + base::display_path(b.path) + ": ";
    if (j.value("absent", false)) {
        b.absent = true;
        return b;
    }
    if (!type_from(j, "type", &b.type) || b.type == Type::None) return bad(where + "unknown type");
    if (!num(j, "size", &b.size) || !num(j, "mode", &b.mode)) return bad(where + "a number field is not an integer");
    auto fp = j.find("fingerprint");
    if (fp != j.end() && !fp->is_null()) {
        if (!fp->is_string() || fp->get<std::string>().size() != 32) return bad(where + "bad fingerprint");
        b.fingerprint = fp->get<std::string>();
    }
    auto st = j.find("stale");
    if (st != j.end()) {
        if (!st->is_boolean()) return bad(where + "stale is not a boolean");
        b.stale = st->get<bool>();
    }
    return b;
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

base::Result<Manifest> manifest_from_text(const std::string& text) {
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return bad("not a JSON object");
    Manifest m;
    if (!j.contains("format") || !j["format"].is_string()) return bad("no format field");
    m.format = j["format"].get<std::string>();
    if (m.format != "layover-patch/1")
        return base::error("unsupported patch format '" + base::display_path(m.format) +
                           "'; this layover reads layover-patch/1, upgrade layover");
    if (!get_bytes(j, "target", &m.target)) return bad("no target");
    m.session = j.value("session", "");
    m.created = j.value("created", "");
    m.version = j.value("version", "");
    for (auto [key, out] : {std::pair<const char*, std::string*>{"kind", &m.kind}, {"undo_store", &m.undo_store}}) {
        if (!j.contains(key)) continue;
        if (!j[key].is_string()) return bad(std::string(key) + " is not a string");
        *out = j[key].get<std::string>();
    }
    if (j.contains("command")) {
        if (!j["command"].is_array()) return bad("command is not an array");
        for (const auto& a : j["command"]) {
            std::string s;
            if (a.is_string()) {
                s = a.get<std::string>();
            } else if (!a.is_object() || !get_bytes(a, "arg", &s)) {
                return bad("an invalid command argument");
            }
            m.command.push_back(std::move(s));
        }
    }
    if (!j.contains("changes") || !j["changes"].is_array()) return bad("no changes array");
    for (const auto& c : j["changes"]) {
        TRY(Change ch, change_from_json(c));
        m.changes.push_back(std::move(ch));
    }
    if (!j.contains("base") || !j["base"].is_array()) return bad("no base array");
    for (const auto& b : j["base"]) {
        TRY(BaseEntry be, base_from_json(b));
        m.base.push_back(std::move(be));
    }
    return m;
}

}  // namespace capture
