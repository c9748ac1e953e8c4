#include "capture/scan/entry/summary.h"

#include <cstdio>

#include "capture/scan/entry/ignore.h"
#include "helper/base/text.h"

namespace capture {

namespace {

std::string octal(uint32_t mode) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%o", mode);
    return buf;
}

void append_line(std::string* out, const Change& c, bool stale) {
    std::string& line = *out;
    line.push_back(kind_letter(c.kind));
    line += "  ";
    base::append_display_path(&line, c.path);
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
    // An addition marked stale: the real file it would bring back was removed.
    if (stale)
        note += std::string(note.empty() ? "" : ", ") + (c.kind == Kind::Added
                                                             ? "removed on disk after the sandbox's version"
                                                             : "changed on disk after the sandbox's version");
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

std::string total_line(const std::vector<Change>& changes, size_t lines) {
    size_t n[6] = {0, 0, 0, 0, 0, 0};
    for (const auto& c : changes) n[static_cast<int>(c.kind)]++;
    if (changes.empty()) return "no changes";
    std::string out = base::thousands(changes.size()) + (changes.size() == 1 ? " change:" : " changes:");
    const char* names[6] = {"added", "modified", "deleted", "type changed", "metadata", "opaque dir"};
    bool first = true;
    for (int k = 0; k < 6; k++) {
        if (!n[k]) continue;
        out += std::string(first ? " " : ", ") + base::thousands(n[k]) + " " + names[k];
        first = false;
    }
    // The total counted what a folded dir holds, the listing showed one line
    // for it: "1,202 changes" under 3 lines read as a miscount.
    if (lines > 0 && lines < changes.size())
        out += " (listed on " + base::thousands(lines) + (lines == 1 ? " line" : " lines") +
               ": a new dir's line stands for what it holds)";
    return out;
}

Fold fold_at(const std::vector<Change>& changes, size_t at) {
    Fold f;
    f.end = at + 1;
    const Change& d = changes[at];
    if (d.type != Type::Dir || (d.kind != Kind::Added && d.kind != Kind::OpaqueDir)) return f;
    std::string prefix = d.path + "/";
    while (f.end < changes.size() && changes[f.end].path.compare(0, prefix.size(), prefix) == 0) {
        const Change& c = changes[f.end];
        if (c.type != Type::Dir) {
            f.files++;
            f.bytes += c.size;
            if (c.mtime_ns == 0 && c.mode == 0) f.sized = false;
        }
        f.end++;
    }
    return f;
}

std::string fold_note(const Fold& f) {
    std::string n = base::thousands(f.files);
    return n + (f.files == 1 ? " file" : " files") + (f.sized ? ", " + base::bytes_text(f.bytes) : "");
}

std::string summary_text(const std::vector<Change>& changes, const std::set<std::string>& stale, bool fold,
                         uint64_t ignored, bool saved, const Extra& extra) {
    std::string out;
    out.reserve(changes.size() * 32);
    size_t lines = 0;
    // A subtree holding a flagged entry is never folded away.
    auto flagged = [&](size_t from, size_t to) {
        for (size_t j = from; extra && j < to; j++)
            if (extra(changes[j]).find("  ! ") != std::string::npos) return true;
        return false;
    };
    for (size_t i = 0; i < changes.size(); i++) {
        const Change& c = changes[i];
        Fold f = fold ? fold_at(changes, i) : Fold{i + 1, 0, 0};
        bool is_stale = !stale.empty() && stale.count(c.path) > 0;
        if (f.end > i + 1 && !flagged(i + 1, f.end)) {
            append_line(&out, c, is_stale);  // a dir the user removed since: "A  docs/  (removed ...; 1 file)"
            std::string note = fold_note(f);
            // "O  build/  (replaced: old contents deleted)" gains the count.
            if (!out.empty() && out.back() == ')') out.insert(out.size() - 1, "; " + note);
            else out += "  (" + note + ")";
            if (extra) out += extra(c);
            out.push_back('\n');
            lines++;
            i = f.end - 1;
            continue;
        }
        append_line(&out, c, is_stale);
        if (extra) out += extra(c);
        out.push_back('\n');
        lines++;
    }
    if (ignored) out += ignored_line(ignored, saved) + "\n";
    out += total_line(changes, lines) + "\n";
    return out;
}

}  // namespace capture
