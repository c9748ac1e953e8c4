#include "review/diff/stat.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "helper/base/text.h"

namespace review {

namespace {

int decimal_width(uint64_t n) {
    int w = 1;
    while (n >= 10) n /= 10, w++;
    return w;
}

// The code point at s[*i] (valid UTF-8: display_path's output), *i moved past it.
uint32_t next_codepoint(const std::string& s, size_t* i) {
    auto b = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    uint32_t c = b(*i);
    size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (n > 1) c &= 0x3F >> (n - 1);
    for (size_t k = 1; k < n && *i + k < s.size(); k++) c = (c << 6) | (b(*i + k) & 0x3F);
    *i += n;
    return c;
}

// Columns a code point takes on a terminal, as git's utf8_width counts them:
// combining marks none, East Asian wide and fullwidth ones (and emoji) two.
int cp_columns(uint32_t c) {
    if ((c >= 0x300 && c <= 0x36F) || (c >= 0x1AB0 && c <= 0x1AFF) || (c >= 0x1DC0 && c <= 0x1DFF) ||
        (c >= 0x20D0 && c <= 0x20FF) || (c >= 0xFE20 && c <= 0xFE2F))
        return 0;
    if ((c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
        (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
        (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
        (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
        (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD))
        return 2;
    return 1;
}

// Columns a name as shown (display_path: printable UTF-8) takes.
int columns(const std::string& s) {
    int n = 0;
    for (size_t i = 0; i < s.size();) n += cp_columns(next_codepoint(s, &i));
    return n;
}

// The longest tail of s that takes at most `cols` columns (whole code points).
std::string tail_within(const std::string& s, int cols) {
    std::vector<std::pair<size_t, int>> cps;  // start, columns
    for (size_t i = 0; i < s.size();) {
        size_t at = i;
        cps.emplace_back(at, cp_columns(next_codepoint(s, &i)));
    }
    size_t cut = s.size();
    int used = 0;
    for (size_t k = cps.size(); k > 0; k--) {
        if (used + cps[k - 1].second > cols) break;
        used += cps[k - 1].second;
        cut = cps[k - 1].first;
    }
    return s.substr(cut);
}

uint64_t scale_linear(uint64_t it, uint64_t width, uint64_t max_change) {
    if (it == 0) return 0;
    return 1 + (it * (width - 1) / max_change);
}

std::string pad_right(const std::string& s, int width) {
    int c = columns(s);
    return c >= width ? s : s + std::string(static_cast<size_t>(width - c), ' ');
}

std::string pad_left(const std::string& s, int width) {
    int c = static_cast<int>(s.size());
    return c >= width ? s : std::string(static_cast<size_t>(width - c), ' ') + s;
}

}  // namespace

std::string render_stat(const std::vector<FileStat>& files, int width, bool color) {
    // The column arithmetic follows git's show_stats(), so the output lines
    // up the same way for the same input and width.
    uint64_t max_change = 0, insertions = 0, deletions = 0;
    int max_len = 0, number_width = 0, bin_width = 0;
    std::vector<std::string> names;
    for (const auto& f : files) {
        names.push_back(base::display_path(f.path));  // as status and the risk lines show it
        max_len = std::max(max_len, columns(names.back()));
        if (f.binary) {
            bin_width = std::max(bin_width, 14 + decimal_width(f.old_size) + decimal_width(f.new_size));
            number_width = 3;
            continue;
        }
        max_change = std::max(max_change, f.added + f.deleted);
        insertions += f.added;
        deletions += f.deleted;
    }
    number_width = std::max(number_width, decimal_width(max_change));
    if (width < 16 + 6 + number_width) width = 16 + 6 + number_width;
    int graph_width = static_cast<int>(max_change) + 4 > bin_width ? static_cast<int>(max_change) : bin_width - 4;
    int name_width = max_len;
    if (name_width + number_width + 6 + graph_width > width) {
        if (graph_width > width * 3 / 8 - number_width - 6) {
            graph_width = width * 3 / 8 - number_width - 6;
            if (graph_width < 6) graph_width = 6;
        }
        if (name_width > width - number_width - 6 - graph_width) name_width = width - number_width - 6 - graph_width;
        else graph_width = width - number_width - 6 - name_width;
    }

    std::string out;
    for (size_t k = 0; k < files.size(); k++) {
        const FileStat& f = files[k];
        std::string name = names[k], prefix;
        int len = name_width;
        if (columns(name) > name_width) {
            // Keep the tail, cut at a directory boundary when there is one.
            prefix = "...";
            len -= 3;
            if (len < 0) len = 0;
            name = tail_within(name, len);
            auto slash = name.find('/');
            if (slash != std::string::npos) name = name.substr(slash);
        }
        out += " " + prefix + pad_right(name, len) + " |";
        if (f.binary) {
            out += " " + pad_left("Bin", number_width);
            if (f.old_size == 0 && f.new_size == 0) {
                out += "\n";
                continue;
            }
            out += " ";
            out += color ? "\033[31m" + std::to_string(f.old_size) + "\033[m" : std::to_string(f.old_size);
            out += " -> ";
            out += color ? "\033[32m" + std::to_string(f.new_size) + "\033[m" : std::to_string(f.new_size);
            out += " bytes\n";
            continue;
        }
        uint64_t add = f.added, del = f.deleted;
        if (static_cast<uint64_t>(graph_width) <= max_change) {
            uint64_t total = scale_linear(f.added + f.deleted, static_cast<uint64_t>(graph_width), max_change);
            if (total < 2 && f.added && f.deleted) total = 2;
            if (f.added < f.deleted) {
                add = scale_linear(f.added, static_cast<uint64_t>(graph_width), max_change);
                del = total - add;
            } else {
                del = scale_linear(f.deleted, static_cast<uint64_t>(graph_width), max_change);
                add = total - del;
            }
        }
        out += " " + pad_left(std::to_string(f.added + f.deleted), number_width);
        if (f.added + f.deleted) out += " ";
        if (add) out += (color ? "\033[32m" : "") + std::string(add, '+') + (color ? "\033[m" : "");
        if (del) out += (color ? "\033[31m" : "") + std::string(del, '-') + (color ? "\033[m" : "");
        out += "\n";
    }
    size_t n = files.size();
    out += " " + std::to_string(n) + (n == 1 ? " file changed" : " files changed");
    if (insertions || !deletions)
        out += ", " + std::to_string(insertions) + (insertions == 1 ? " insertion(+)" : " insertions(+)");
    if (deletions || !insertions)
        out += ", " + std::to_string(deletions) + (deletions == 1 ? " deletion(-)" : " deletions(-)");
    out += "\n";
    return out;
}

std::string render_name_status(const std::vector<FileStat>& files) {
    std::string out;
    for (const auto& f : files) {
        out.push_back(f.status);
        out += "\t" + git_quote(f.path) + "\n";
    }
    return out;
}

}  // namespace review
