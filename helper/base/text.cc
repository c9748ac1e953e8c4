#include "helper/base/text.h"

#include <cmath>
#include <cstdint>
#include <cstdio>

namespace base {

namespace {

const char kHex[] = "0123456789abcdef";

}  // namespace

size_t utf8_at(std::string_view s, size_t i, uint32_t* out) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    unsigned char c = b(i);
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
        *out = c;
        return 1;
    }
    if ((c & 0xE0) == 0xC0) {
        n = 2;
        cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
        n = 3;
        cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
        n = 4;
        cp = c & 0x07;
    } else {
        return 0;
    }
    if (i + n > s.size()) return 0;
    for (size_t k = 1; k < n; k++) {
        if ((b(i + k) & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (b(i + k) & 0x3F);
    }
    // Reject overlong forms, surrogates and values past U+10FFFF.
    if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000)) return 0;
    if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    *out = cp;
    return n;
}

bool is_unsafe_codepoint(uint32_t cp) {
    if ((cp >= 0x80 && cp <= 0x9F) || cp == 0x2028 || cp == 0x2029) return true;
    // Unicode's default-ignorable code points (DerivedCoreProperties.txt):
    // drawn as nothing, they include the bidi controls and marks, and make
    // two different names look the same (`notes.txt` + U+200B, tag
    // characters U+E0000-U+E0FFF that carry hidden text).
    static constexpr uint32_t kIgnorable[][2] = {
        {0x00AD, 0x00AD}, {0x034F, 0x034F}, {0x061C, 0x061C},   {0x115F, 0x1160},   {0x17B4, 0x17B5},  {0x180B, 0x180F},
        {0x200B, 0x200F}, {0x202A, 0x202E}, {0x2060, 0x206F},   {0x3164, 0x3164},   {0xFE00, 0xFE0F},  {0xFEFF, 0xFEFF},
        {0xFFA0, 0xFFA0}, {0xFFF0, 0xFFFB}, {0x1BCA0, 0x1BCA3}, {0x1D173, 0x1D17A}, {0xE0000, 0xE0FFF}};
    for (const auto& r : kIgnorable)
        if (cp >= r[0] && cp <= r[1]) return true;
    return false;
}

void append_codepoint_escape(std::string* out, uint32_t cp) {
    int digits = cp > 0xFFFF ? 8 : 4;
    *out += cp > 0xFFFF ? "\\U" : "\\u";
    for (int shift = 4 * (digits - 1); shift >= 0; shift -= 4) out->push_back(kHex[(cp >> shift) & 15]);
}

bool is_utf8(std::string_view s) {
    uint32_t cp;
    for (size_t i = 0; i < s.size();) {
        size_t n = utf8_at(s, i, &cp);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string to_hex(std::string_view raw) {
    std::string out(2 * raw.size(), '\0');  // one allocation
    for (size_t i = 0; i < raw.size(); i++) {
        unsigned char c = static_cast<unsigned char>(raw[i]);
        out[2 * i] = kHex[c >> 4];
        out[2 * i + 1] = kHex[c & 15];
    }
    return out;
}

bool from_hex(std::string_view hex, std::string* out) {
    if (hex.size() % 2) return false;
    auto val = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
    out->clear();
    for (size_t i = 0; i < hex.size(); i += 2) {
        int hi = val(hex[i]), lo = val(hex[i + 1]);
        if (hi < 0 || lo < 0) return false;
        out->push_back(static_cast<char>(hi * 16 + lo));
    }
    return true;
}

std::string display_path(std::string_view raw) {
    std::string out;
    bool quoted = false;
    for (size_t i = 0; i < raw.size();) {
        unsigned char c = static_cast<unsigned char>(raw[i]);
        uint32_t cp = 0;
        size_t n = utf8_at(raw, i, &cp);
        if (n > 1 && is_unsafe_codepoint(cp)) {
            quoted = true;
            append_codepoint_escape(&out, cp);
            i += n;
            continue;
        }
        if (n > 1) {
            out.append(raw.substr(i, n));
            i += n;
            continue;
        }
        i++;
        if (n == 1 && c >= 0x20 && c != 0x7F && c != '"' && c != '\\') {
            out.push_back(static_cast<char>(c));
            continue;
        }
        quoted = true;
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            default:
                out += "\\x";
                out.push_back(kHex[c >> 4]);
                out.push_back(kHex[c & 15]);
        }
    }
    // A leading or trailing space is invisible unquoted: `notes.txt ` would
    // look like `notes.txt`.
    if (!raw.empty() && (raw.front() == ' ' || raw.back() == ' ')) quoted = true;
    return quoted ? "\"" + out + "\"" : out;
}

void append_display_path(std::string* out, std::string_view raw) {
    bool plain = raw.empty() || (raw.front() != ' ' && raw.back() != ' ');
    for (size_t i = 0; plain && i < raw.size(); i++) {
        unsigned char c = static_cast<unsigned char>(raw[i]);
        plain = c >= 0x20 && c < 0x7F && c != '"' && c != '\\';
    }
    if (plain) out->append(raw);
    else *out += display_path(raw);
}

std::string caret_escape(std::string_view raw, bool keep_newlines) {
    std::string out;
    out.reserve(raw.size());
    for (char ch : raw) {
        unsigned char c = static_cast<unsigned char>(ch);
        if ((c == '\n' && keep_newlines) || c == '\t' || (c >= 0x20 && c != 0x7F)) {
            out.push_back(ch);
        } else if (c == 0x7F) {
            out += "^?";
        } else {
            out.push_back('^');
            out.push_back(static_cast<char>(c + 64));
        }
    }
    return out;
}

std::string base64_encode(std::string_view raw) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    std::string out;
    out.reserve((raw.size() + 2) / 3 * 4);
    size_t i = 0;
    auto u = [&](size_t k) { return static_cast<uint32_t>(static_cast<unsigned char>(raw[k])); };
    for (; i + 2 < raw.size(); i += 3) {
        uint32_t v = (u(i) << 16) | (u(i + 1) << 8) | u(i + 2);
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], t[v & 63]};
    }
    if (i + 1 == raw.size()) {
        uint32_t v = u(i) << 16;
        out += {t[v >> 18], t[(v >> 12) & 63], '=', '='};
    } else if (i + 2 == raw.size()) {
        uint32_t v = (u(i) << 16) | (u(i + 1) << 8);
        out += {t[v >> 18], t[(v >> 12) & 63], t[(v >> 6) & 63], '='};
    }
    return out;
}

bool base64_decode(std::string_view text, std::string* out) {
    auto val = [](char c) -> int {
        if (c >= 'A' && c <= 'Z') return c - 'A';
        if (c >= 'a' && c <= 'z') return c - 'a' + 26;
        if (c >= '0' && c <= '9') return c - '0' + 52;
        if (c == '+') return 62;
        if (c == '/') return 63;
        return -1;
    };
    if (text.size() % 4 != 0) return false;
    out->clear();
    for (size_t i = 0; i < text.size(); i += 4) {
        int v[4];
        int pad = 0;
        for (int k = 0; k < 4; k++) {
            char c = text[i + static_cast<size_t>(k)];
            if (c == '=' && i + 4 == text.size() && k >= 2) {
                v[k] = 0;
                pad++;
            } else if (pad > 0 || (v[k] = val(c)) < 0) {
                return false;
            }
        }
        uint32_t w = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                     (static_cast<uint32_t>(v[2]) << 6) | static_cast<uint32_t>(v[3]);
        out->push_back(static_cast<char>(w >> 16));
        if (pad < 2) out->push_back(static_cast<char>((w >> 8) & 0xFF));
        if (pad < 1) out->push_back(static_cast<char>(w & 0xFF));
    }
    return true;
}

bool valid_session_name(std::string_view name) {
    // Not "-x": a name that reads as an option (`restore -rf`) could not be named.
    if (name.empty() || name.size() > 64 || name == "." || name == ".." || name[0] == '-') return false;
    for (char c : name) {
        bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
                  c == '-';
        if (!ok) return false;
    }
    return true;
}

std::string thousands(unsigned long long n) {
    std::string digits = std::to_string(n), out;
    for (size_t i = 0; i < digits.size(); i++) {
        if (i && (digits.size() - i) % 3 == 0) out.push_back(',');
        out.push_back(digits[i]);
    }
    return out;
}

namespace {

// n in the largest unit of 1024 it reaches (at most "E").
double scaled(uint64_t n, int* unit) {
    double v = static_cast<double>(n);
    *unit = 0;
    while (v >= 1024 && *unit < 6) {
        v /= 1024;
        ++*unit;
    }
    return v;
}

}  // namespace

std::string bytes_text(uint64_t n) {
    static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int u;
    double v = scaled(n, &u);
    char buf[32];
    if (u == 0) std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(n));
    else std::snprintf(buf, sizeof buf, v < 10 ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

std::string bytes_short(uint64_t n) {
    static const char* const units[] = {"B", "K", "M", "G", "T", "P", "E"};
    int u;
    double v = scaled(n, &u);
    char buf[32];
    std::snprintf(buf, sizeof buf, v == std::floor(v) ? "%.0f%s" : "%.1f%s", v, units[u]);
    return buf;
}

std::string expand_home(const std::string& path, const char* home) {
    if (path.rfind("~/", 0) != 0 || !home || *home != '/') return path;
    return home + path.substr(1);
}

std::string clean_path(std::string_view abs) {
    std::string out;
    size_t i = 0;
    while (i < abs.size()) {
        size_t j = abs.find('/', i);
        if (j == std::string_view::npos) j = abs.size();
        std::string_view part = abs.substr(i, j - i);
        if (!part.empty() && part != ".") (out += '/') += part;
        i = j + 1;
    }
    return out.empty() ? "/" : out;
}

}  // namespace base
