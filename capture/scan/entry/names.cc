#include "capture/scan/entry/names.h"

#include <string_view>

namespace capture {

std::string check_relative_path(const std::string& name, uint64_t max_len) {
    if (name.empty()) return "empty name";
    if (name.size() > max_len) return "name longer than " + std::to_string(max_len) + " bytes";
    if (name.find('\0') != std::string::npos) return "name contains a NUL byte";
    if (name[0] == '/') return "absolute path";
    std::string_view rest = name;
    for (;;) {
        size_t slash = rest.find('/');
        std::string_view comp = rest.substr(0, slash);
        if (comp.empty()) return "empty path component";
        if (comp == ".") return "'.' path component";
        if (comp == "..") return "'..' path component (path traversal)";
        if (slash == std::string_view::npos) break;
        rest.remove_prefix(slash + 1);
    }
    return "";
}

NameRole name_role(const std::string& name, std::string* path) {
    auto slash = name.rfind('/');
    std::string dir = slash == std::string::npos ? "" : name.substr(0, slash);
    std::string last = slash == std::string::npos ? name : name.substr(slash + 1);
    *path = name;
    if (last.compare(0, 4, ".wh.") != 0) return NameRole::Plain;
    if (last == ".wh..wh..opq") {
        *path = dir;
        return dir.empty() ? NameRole::Reserved : NameRole::Opaque;
    }
    if (last.compare(0, 8, ".wh..wh.") == 0) return NameRole::Reserved;
    std::string victim = last.substr(4);
    if (victim.empty() || victim == "." || victim == "..") return NameRole::Reserved;
    *path = dir.empty() ? victim : dir + "/" + victim;
    return NameRole::Whiteout;
}

std::string whiteout_name(const std::string& path) {
    auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".wh." + path;
    return path.substr(0, slash + 1) + ".wh." + path.substr(slash + 1);
}

std::string opaque_name(const std::string& dir) { return dir + "/.wh..wh..opq"; }

}  // namespace capture

namespace capture {

std::string xattr_key_encode(const std::string& name) {
    static const char hex[] = "0123456789ABCDEF";
    std::string out;
    for (unsigned char c : name) {
        if (c < 33 || c > 126 || c == '%' || c == '=') {
            out += '%';
            out += hex[c >> 4];
            out += hex[c & 15];
        } else {
            out += static_cast<char>(c);
        }
    }
    return out;
}

}  // namespace capture
