#include "overlay/options.h"

#include <cctype>

namespace overlay {

std::string escape_option_value(const std::string& path) {
    std::string out;
    for (char c : path) {
        if (c == '\\' || c == ',' || c == ':') out.push_back('\\');
        out.push_back(c);
    }
    return out;
}

std::string overlay_options(const std::string& lower, const std::string& upper, const std::string& work) {
    return "lowerdir=" + escape_option_value(lower) + ",upperdir=" + escape_option_value(upper) +
           ",workdir=" + escape_option_value(work) + ",userxattr,volatile";
}

namespace {

std::string lowerdir(const std::vector<std::string>& lowers) {
    std::string joined;
    for (const auto& l : lowers) joined += (joined.empty() ? "" : ":") + escape_option_value(l);
    return "lowerdir=" + joined;
}

}  // namespace

std::string overlay_options(const std::vector<std::string>& lowers, const std::string& upper, const std::string& work,
                            bool xino) {
    return lowerdir(lowers) + ",upperdir=" + escape_option_value(upper) + ",workdir=" + escape_option_value(work) +
           ",userxattr,volatile" + (xino ? ",xino=on" : "");
}

std::string read_only_options(const std::vector<std::string>& lowers) {
    return lowerdir(lowers) + ",userxattr,xino=on";
}

bool parse_size(const std::string& text, unsigned long long total_ram, unsigned long long* out) {
    if (text.empty() || !std::isdigit(static_cast<unsigned char>(text[0]))) return false;
    size_t i = 0;
    unsigned long long n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
        unsigned long long d = static_cast<unsigned long long>(text[i] - '0');
        if (n > (~0ull - d) / 10) return false;
        n = n * 10 + d;
        i++;
    }
    std::string suffix = text.substr(i);
    unsigned shift = 0;
    if (suffix == "%") {
        if (n == 0 || n > 100) return false;
        *out = total_ram / 100 * n;
        return true;
    }
    if (suffix.empty()) shift = 0;
    else if (suffix == "k" || suffix == "K") shift = 10;
    else if (suffix == "m" || suffix == "M") shift = 20;
    else if (suffix == "g" || suffix == "G") shift = 30;
    else return false;
    if (n == 0 || (shift && n > (~0ull >> shift))) return false;
    *out = n << shift;
    return true;
}

unsigned long long default_tmp_size(unsigned long long total_ram) {
    unsigned long long quarter = total_ram / 4;
    unsigned long long cap = 2ull << 30;
    return quarter < cap ? quarter : cap;
}

unsigned long long tmp_inodes(unsigned long long tmp_size) {
    unsigned long long n = tmp_size / kTmpBytesPerInode;
    return n < kMinTmpInodes ? kMinTmpInodes : n;
}

}  // namespace overlay
