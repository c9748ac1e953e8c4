#include "review/diff/format.h"

#include <sys/stat.h>

#include <cstdio>

#include "helper/base/text.h"
#include "review/diff/algo.h"
#include "review/diff/hunks.h"

namespace review {

namespace {

const char kReset[] = "\033[m";
const char kBold[] = "\033[1m";
const char kCyan[] = "\033[36m";
const char kRed[] = "\033[31m";
const char kGreen[] = "\033[32m";

// 0: printed as is; a letter: backslash + letter; 1: octal.
char quote_class(unsigned char c) {
    switch (c) {
        case '\a': return 'a';
        case '\b': return 'b';
        case '\t': return 't';
        case '\n': return 'n';
        case '\v': return 'v';
        case '\f': return 'f';
        case '\r': return 'r';
        case '"': return '"';
        case '\\': return '\\';
        default: return (c < 0x20 || c >= 0x7F) ? 1 : 0;
    }
}

bool needs_quote(std::string_view s) {
    for (char c : s)
        if (quote_class(static_cast<unsigned char>(c))) return true;
    return false;
}

void quote_into(std::string& out, std::string_view s) {
    for (char ch : s) {
        unsigned char c = static_cast<unsigned char>(ch);
        char q = quote_class(c);
        if (q == 0) {
            out.push_back(ch);
        } else if (q == 1) {
            char buf[5];
            std::snprintf(buf, sizeof buf, "\\%03o", c);
            out += buf;
        } else {
            out.push_back('\\');
            out.push_back(q);
        }
    }
}

std::string octal(uint32_t mode) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%o", mode);
    return buf;
}

struct Out {
    const Style& st;
    std::string s;
    void meta(const std::string& line) {
        if (st.color) s += kBold;
        s += line;
        if (st.color) s += kReset;
        s += '\n';
    }
    void hunk_header(const std::string& line) {
        if (st.color) s += kCyan;
        s += line;
        if (st.color) s += kReset;
        s += '\n';
    }
    void line(char sign, std::string_view text) {
        bool has_nl = !text.empty() && text.back() == '\n';
        if (has_nl) text.remove_suffix(1);
        const char* col = sign == '-' ? kRed : sign == '+' ? kGreen : nullptr;
        if (st.color && col) s += col;
        s.push_back(sign);
        if (st.escape) s += terminal_safe(text);
        else s.append(text);
        if (st.color && col) s += kReset;
        s += '\n';
        if (!has_nl) s += "\\ No newline at end of file\n";
    }
};

std::string range(size_t start, size_t count) {
    // git: "-l,s" with s omitted when 1, and l the line before when s is 0.
    std::string r = std::to_string(count == 0 ? start : start + 1);
    if (count != 1) r += "," + std::to_string(count);
    return r;
}

void render_hunks(Out& o, std::string_view old_text, std::string_view new_text, FileStat& stat, size_t line0) {
    auto a = split_lines(old_text), b = split_lines(new_text);
    LineDiff d = diff_lines(a, b);
    auto spans = hunk_spans(groups_of(d), a.size(), o.st.context);
    for (size_t h = 0; h < spans.size(); h++) {
        const HunkSpan& sp = spans[h];
        size_t a_start = sp.a_start, a_end = sp.a_end, b_start = sp.b_start, b_end = sp.b_end;
        // A hunk number goes where git puts a section heading, which git apply ignores.
        std::string number = o.st.hunk_numbers ? " hunk " + std::to_string(h + 1) : "";
        o.hunk_header("@@ -" + range(line0 + a_start, a_end - a_start) + " +" +
                      range(line0 + b_start, b_end - b_start) + " @@" + number);
        size_t i = a_start, j = b_start;
        while (i < a_end || j < b_end) {
            if (i < a_end && d.del[i]) {
                o.line('-', a[i++]);
                stat.deleted++;
            } else if (j < b_end && d.ins[j]) {
                o.line('+', b[j++]);
                stat.added++;
            } else {
                o.line(' ', a[i]);
                i++;
                j++;
            }
        }
    }
}

void render_one(Out& o, const FileDiff& f, FileStat& stat) {
    const Side& os = f.old_side;
    const Side& ns = f.new_side;
    o.meta("diff --git " + git_quote_two("a/", f.path) + " " + git_quote_two("b/", f.path));
    if (!os.exists) o.meta("new file mode " + octal(ns.mode));
    else if (!ns.exists) o.meta("deleted file mode " + octal(os.mode));
    else if (os.mode != ns.mode) o.meta("old mode " + octal(os.mode)), o.meta("new mode " + octal(ns.mode));

    bool binary =
        (os.exists && (!os.loaded || looks_binary(os.data))) || (ns.exists && (!ns.loaded || looks_binary(ns.data)));
    bool same = os.exists && ns.exists && os.loaded && ns.loaded && os.data == ns.data;
    if (same) return;
    std::string la = os.exists ? git_quote_two("a/", f.path) : "/dev/null";
    std::string lb = ns.exists ? git_quote_two("b/", f.path) : "/dev/null";
    if (binary) {
        stat.binary = true;
        stat.old_size = os.exists ? os.size : 0;
        stat.new_size = ns.exists ? ns.size : 0;
        o.s += "Binary files " + la + " and " + lb + " differ\n";
        return;
    }
    std::string_view old_text = os.exists ? std::string_view(os.data) : std::string_view();
    std::string_view new_text = ns.exists ? std::string_view(ns.data) : std::string_view();
    if (old_text.empty() && new_text.empty()) return;  // empty file created or deleted
    // git marks names holding a space with a trailing tab, so they parse.
    const char* tab = f.path.find(' ') != std::string::npos ? "\t" : "";
    o.meta("--- " + la + (os.exists ? tab : ""));
    o.meta("+++ " + lb + (ns.exists ? tab : ""));
    render_hunks(o, old_text, new_text, stat, static_cast<size_t>(os.exists ? os.first_line : ns.first_line));
}

}  // namespace

uint32_t git_file_mode(uint32_t perm) { return (perm & 0100) ? kGitExec : kGitRegular; }

std::string git_quote(std::string_view name) {
    if (!needs_quote(name)) return std::string(name);
    std::string out = "\"";
    quote_into(out, name);
    return out + "\"";
}

std::string git_quote_two(std::string_view prefix, std::string_view name) {
    if (!needs_quote(prefix) && !needs_quote(name)) return std::string(prefix) + std::string(name);
    std::string out = "\"";
    quote_into(out, prefix);
    quote_into(out, name);
    return out + "\"";
}

std::string terminal_safe(std::string_view s) {
    static const char hex[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size());
    // After a raw code point from U+2000 on: 1; after that symbol's kept
    // presentation selector: 2; else 0. One selector then one joiner at
    // most, so a run of invisible ones is never kept (they could carry bits).
    int after_symbol = 0;
    for (size_t i = 0; i < s.size();) {
        unsigned char c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            after_symbol = 0;
            if (c == '\t' || (c >= 0x20 && c != 0x7F)) {
                out.push_back(static_cast<char>(c));
            } else {
                out.push_back('^');
                out.push_back(c == 0x7F ? '?' : static_cast<char>(c + 64));
            }
            i++;
            continue;
        }
        // One UTF-8 sequence; anything malformed is shown byte by byte, and
        // code points that steer a terminal (C1, bidi) or draw as nothing
        // as \uXXXX, but for the joiner and the presentation selectors of an
        // emoji sequence (a symbol's U+FE0F, U+200D between two: they hide
        // no text, and a README's warning sign keeps its look).
        uint32_t cp = 0;
        size_t n = base::utf8_at(s, i, &cp);
        bool selector = cp == 0xFE0E || cp == 0xFE0F;
        bool kept = (selector && after_symbol == 1) || (cp == 0x200D && after_symbol > 0);
        if (n == 0) {
            out += "\\x";
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
            i++;
            after_symbol = 0;
            continue;
        }
        if (base::is_unsafe_codepoint(cp) && !kept) {
            base::append_codepoint_escape(&out, cp);
            after_symbol = 0;
        } else {
            out.append(s.substr(i, n));
            after_symbol = kept ? (selector ? 2 : 0) : cp >= 0x2000 ? 1 : 0;
        }
        i += n;
    }
    return out;
}

bool looks_binary(std::string_view data) { return data.substr(0, 8000).find('\0') != std::string_view::npos; }

std::string render_file(const FileDiff& f, const Style& style, FileStat* stat) {
    FileStat local;
    FileStat& st = stat ? *stat : local;
    st = FileStat{};
    st.path = f.path;
    const Side& os = f.old_side;
    const Side& ns = f.new_side;
    if (!os.exists && !ns.exists) return "";
    st.status = !os.exists ? 'A' : !ns.exists ? 'D' : 'M';
    Out o{style, {}};
    if (os.exists && ns.exists && (os.mode & S_IFMT) != (ns.mode & S_IFMT)) {
        // git shows a type change as a deletion followed by a creation.
        st.status = 'T';
        FileDiff del{f.path, os, Side{}}, add{f.path, Side{}, ns};
        render_one(o, del, st);
        FileStat second;
        render_one(o, add, second);
        st.added += second.added;
        st.deleted += second.deleted;
        st.binary = st.binary || second.binary;
        st.old_size = os.size;
        st.new_size = ns.size;
        return o.s;
    }
    if (os.exists && ns.exists && os.mode == ns.mode && os.loaded && ns.loaded && os.data == ns.data) return "";
    render_one(o, f, st);
    return o.s;
}

}  // namespace review
