#include "capture/patch/manifest.h"

#include "capture/patch/change_json.h"
#include "capture/patch/manifest_steps.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"

namespace capture {

std::string changes_to_json_text(const std::vector<Change>& changes, const RisksOf& risks, const ExtraOf& extra) {
    if (changes.empty()) return "[]\n";
    std::string out;
    out.reserve(changes.size() * 175);
    for (const auto& c : changes) {
        out += out.empty() ? "[\n  " : ",\n  ";
        jsontext::change(&out, c, false);
        out.pop_back();  // the closing brace: "risks" goes inside
        out += ", \"risks\": [";
        if (risks) {
            bool first = true;
            for (const auto& r : risks(c)) {
                if (!first) out += ", ";
                first = false;
                base::json::str(&out, r);
            }
        }
        out += "]";
        if (extra) out += extra(c);
        out += "}";
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
    if (m.ignored) {
        out += ",\n \"ignored\": ";
        num(&out, m.ignored);
    }
    if (!m.originals.empty()) {
        out += ",\n \"originals\": [";
        for (size_t i = 0; i < m.originals.size(); i++) {
            out += i ? ",\n  {\"fingerprint\": " : "\n  {\"fingerprint\": ";
            str(&out, m.originals[i].fingerprint);
            out += ", \"size\": ";
            num(&out, m.originals[i].size);
            out += "}";
        }
        out += "]";
    }
    steps_to_manifest(&out, m.steps);
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
