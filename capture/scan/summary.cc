#include "capture/scan/summary.h"

#include <cstdio>

#include "helper/base/text.h"

namespace capture {

namespace {

// base::display_path, minus its copy for the common name that needs no
// escaping (printable ASCII without quotes or backslashes): status prints
// one per change.
void append_display(std::string* out, const std::string& raw) {
    for (unsigned char c : raw) {
        if (c < 0x20 || c >= 0x7F || c == '"' || c == '\\') {
            *out += base::display_path(raw);
            return;
        }
    }
    *out += raw;
}

std::string octal(uint32_t mode) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%o", mode);
    return buf;
}

void append_line(std::string* out, const Change& c, bool stale) {
    std::string& line = *out;
    line.push_back(kind_letter(c.kind));
    line += "  ";
    append_display(&line, c.path);
    if (c.type == Type::Dir || (c.kind == Kind::Deleted && c.old_type == Type::Dir)) line += "/";
    std::string note;
    switch (c.kind) {
        case Kind::TypeChanged: note = std::string(type_name(c.old_type)) + " -> " + type_name(c.type); break;
        case Kind::Metadata:
            if (c.mode != c.old_mode) note = "mode " + octal(c.old_mode) + " -> " + octal(c.mode);
            else note = "xattrs";
            break;
        case Kind::OpaqueDir: note = "replaced: old contents deleted"; break;
        default:
            if (c.type == Type::Symlink) note = "-> " + base::display_path(c.link_target);
            else if (c.type == Type::Fifo) note = "fifo";
    }
    if (!c.captured) note += std::string(note.empty() ? "" : ", ") + type_name(c.type) + ", not captured";
    if (stale) note += std::string(note.empty() ? "" : ", ") + "changed on disk since copy-up";
    if (!note.empty()) {
        line += "  (";
        line += note;
        line += ")";
    }
}

}  // namespace

std::string summary_line(const Change& c, bool stale) {
    std::string line;
    append_line(&line, c, stale);
    return line;
}

std::string total_line(const std::vector<Change>& changes) {
    size_t n[6] = {0, 0, 0, 0, 0, 0};
    for (const auto& c : changes) n[static_cast<int>(c.kind)]++;
    if (changes.empty()) return "no changes";
    std::string out = std::to_string(changes.size()) + (changes.size() == 1 ? " change:" : " changes:");
    const char* names[6] = {"added", "modified", "deleted", "type changed", "metadata", "opaque dir"};
    bool first = true;
    for (int k = 0; k < 6; k++) {
        if (!n[k]) continue;
        out += std::string(first ? " " : ", ") + std::to_string(n[k]) + " " + names[k];
        first = false;
    }
    return out;
}

std::string summary_text(const std::vector<Change>& changes, const std::set<std::string>& stale) {
    std::string out;
    out.reserve(changes.size() * 32);
    for (const auto& c : changes) {
        append_line(&out, c, !stale.empty() && stale.count(c.path) > 0);
        out.push_back('\n');
    }
    out += total_line(changes) + "\n";
    return out;
}

}  // namespace capture
