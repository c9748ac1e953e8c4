#include "overlay/mountinfo.h"

#include <algorithm>
#include <string_view>

namespace overlay {

namespace {

std::string unescape_octal(const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size(); i++) {
        if (s[i] == '\\' && i + 3 < s.size() && s[i + 1] >= '0' && s[i + 1] <= '3' && s[i + 2] >= '0' &&
            s[i + 2] <= '7' && s[i + 3] >= '0' && s[i + 3] <= '7') {
            out.push_back(static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0')));
            i += 3;
        } else {
            out.push_back(s[i]);
        }
    }
    return out;
}

}  // namespace

// Whitespace as `>>` splits on in the C locale. A hand-made splitter: the
// istringstream per line was ~0.1 ms of run's start-up (issue 20).
static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }

std::vector<MountEntry> parse_mountinfo(const std::string& text) {
    std::vector<MountEntry> out;
    std::vector<std::string_view> fields;
    size_t pos = 0;
    while (pos < text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        std::string_view line(text.data() + pos, end - pos);
        pos = end + 1;
        // id parent major:minor root mount_point options [optional...] - fstype source super
        fields.clear();
        for (size_t i = 0; i < line.size();) {
            while (i < line.size() && is_ws(line[i])) i++;
            size_t j = i;
            while (j < line.size() && !is_ws(line[j])) j++;
            if (j > i) fields.push_back(line.substr(i, j - i));
            i = j;
        }
        if (fields.size() < 7) continue;
        auto sep = std::find(fields.begin() + 6, fields.end(), std::string_view("-"));
        if (sep == fields.end() || sep + 1 == fields.end()) continue;
        out.push_back({unescape_octal(std::string(fields[4])), std::string(*(sep + 1)), std::string(fields[2]),
                       unescape_octal(std::string(fields[3]))});
    }
    return out;
}

bool path_within(const std::string& path, const std::string& dir) {
    if (dir == "/") return !path.empty() && path[0] == '/';
    if (path.compare(0, dir.size(), dir) != 0) return false;
    return path.size() == dir.size() || path[dir.size()] == '/';
}

std::vector<std::string> submounts_under(const std::vector<MountEntry>& mounts, const std::string& dir) {
    std::vector<std::string> below;
    for (const auto& m : mounts)
        if (m.mount_point != dir && path_within(m.mount_point, dir)) below.push_back(m.mount_point);
    std::sort(below.begin(), below.end(), [](const std::string& a, const std::string& b) {
        return a.size() != b.size() ? a.size() < b.size() : a < b;
    });
    below.erase(std::unique(below.begin(), below.end()), below.end());
    std::vector<std::string> top;
    for (const auto& p : below) {
        bool covered = false;
        for (const auto& t : top)
            if (path_within(p, t)) covered = true;
        if (!covered) top.push_back(p);
    }
    return top;
}

namespace {

// dir + the part of path below base ("/" + "a/b" style joins without "//").
std::string rebase(const std::string& path, const std::string& base, const std::string& dir) {
    std::string rest = base == "/" ? path : path.substr(base.size());
    if (rest.empty()) return dir;
    if (dir == "/") return rest;
    return dir + rest;
}

}  // namespace

std::vector<std::string> aliases_of(const std::vector<MountEntry>& mounts, const std::string& path) {
    const MountEntry* home = nullptr;
    for (const auto& m : mounts)
        if (path_within(path, m.mount_point) && (!home || m.mount_point.size() >= home->mount_point.size())) home = &m;
    if (!home) return {};
    std::string in_fs = rebase(path, home->mount_point, home->root);
    std::vector<std::string> out;
    for (const auto& m : mounts) {
        if (&m == home || m.dev != home->dev || !path_within(in_fs, m.root)) continue;
        std::string alias = rebase(in_fs, m.root, m.mount_point);
        if (alias != path && std::find(out.begin(), out.end(), alias) == out.end()) out.push_back(alias);
    }
    return out;
}

}  // namespace overlay
