#include "helper/base/toml.h"

#include <cstdio>
#include <set>
#include <utility>

#include "helper/base/cat.h"

namespace base::toml {

namespace {

bool bare_char(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

void put_utf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
        *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
        *out += static_cast<char>(0xC0 | (cp >> 6));
        *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *out += static_cast<char>(0xE0 | (cp >> 12));
        *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
        *out += static_cast<char>(0xF0 | (cp >> 18));
        *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
        *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
        *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
}

class Reader {
public:
    Reader(std::string_view text, ParseError* err) : s_(text), err_(err) {}

    bool run(Doc* doc) {
        std::string table;
        std::set<std::pair<std::string, std::string>> keys;
        std::set<std::string> tables;
        while (true) {
            skip_blank();
            if (at_end()) return true;
            char c = s_[i_];
            if (c == '\n' || c == '#') {
                if (!end_of_line()) return false;
                continue;
            }
            int line = line_;
            if (c == '[') {
                if (!header(&table)) return false;
                if (!tables.insert(table).second)
                    return fail("table [" + table + "] appears twice; merge its keys into the first one");
                doc->tables.push_back({table, line});
            } else {
                Entry e;
                e.table = table;
                e.line = line;
                if (!key(&e.key) || !value(&e.value)) return false;
                if (!keys.insert({table, e.key}).second)
                    return fail("key '" + e.key + "' is set twice" + (table.empty() ? "" : " in [" + table + "]") +
                                "; keep one (an array takes several values: [\"a\", \"b\"])");
                doc->entries.push_back(std::move(e));
            }
            if (!end_of_line()) return false;
        }
    }

private:
    bool at_end() const { return i_ >= s_.size(); }

    bool fail(const std::string& msg) {
        err_->line = line_;
        err_->message = msg;
        return false;
    }

    void skip_blank() {
        while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\r')) i_++;
    }

    // Optional comment, then a newline or the end.
    bool end_of_line() {
        skip_blank();
        if (!at_end() && s_[i_] == '#')
            while (!at_end() && s_[i_] != '\n') i_++;
        if (at_end()) return true;
        if (s_[i_] != '\n')
            return fail("unexpected text after the value; put one key = value per line (a comment starts with #)");
        i_++;
        line_++;
        return true;
    }

    bool bare(std::string* out, const char* what) {
        size_t start = i_;
        while (!at_end() && bare_char(s_[i_])) i_++;
        *out = std::string(s_.substr(start, i_ - start));
        if (out->empty() || (!at_end() && (s_[i_] == '.' || s_[i_] == '"' || s_[i_] == '\'')))
            return fail(std::string("expected a ") + what +
                        " of letters, digits, '-' or '_'; quoted and dotted names are not supported");
        return true;
    }

    bool header(std::string* table) {
        i_++;
        if (!at_end() && s_[i_] == '[')
            return fail("arrays of tables ([[...]]) are not supported; use [VERB] tables, e.g. [run]");
        skip_blank();
        if (!bare(table, "table name")) return false;
        skip_blank();
        if (at_end() || s_[i_] != ']') return fail("table header needs a closing ']'; write e.g. [run]");
        i_++;
        return true;
    }

    bool key(std::string* k) {
        if (!bare(k, "key")) return false;
        skip_blank();
        if (at_end() || s_[i_] != '=')
            return fail("expected '=' after '" + *k + "'; write key = value, e.g. network = \"none\"");
        i_++;
        skip_blank();
        return true;
    }

    bool hex(int n, uint32_t* cp) {
        *cp = 0;
        for (int k = 0; k < n; k++, i_++) {
            if (at_end()) return false;
            char c = s_[i_];
            int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
            if (d < 0) return false;
            *cp = *cp * 16 + static_cast<uint32_t>(d);
        }
        return true;
    }

    bool basic_string(std::string* out) {
        i_++;
        if (s_.substr(i_, 2) == "\"\"")
            return fail("multi-line strings (\"\"\") are not supported; write one line, with \\n for a newline");
        while (true) {
            if (at_end() || s_[i_] == '\n') return fail("string has no closing '\"'; close it on the same line");
            char c = s_[i_++];
            if (c == '"') return true;
            if (static_cast<unsigned char>(c) < 0x20 && c != '\t')
                return fail("control character in a string; write it as an escape such as \\n");
            if (c != '\\') {
                *out += c;
                continue;
            }
            if (at_end()) return fail("string ends in a lone '\\'; write \\\\ for a backslash");
            char e = s_[i_++];
            uint32_t cp = 0;
            switch (e) {
                case '"': *out += '"'; break;
                case '\\': *out += '\\'; break;
                case 'n': *out += '\n'; break;
                case 't': *out += '\t'; break;
                case 'r': *out += '\r'; break;
                case 'b': *out += '\b'; break;
                case 'f': *out += '\f'; break;
                case 'u':
                case 'U':
                    if (!hex(e == 'u' ? 4 : 8, &cp) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
                        return fail(base::cat({"bad \\", std::string_view(&e, 1),
                                               " escape; write \\u and 4 hex digits (\\U and 8) of a "
                                               "Unicode scalar value, e.g. \\u00e9"}));
                    // No option value can hold a NUL (an argv word cannot): it cut
                    // every message quoting the value short (attack pass of 27 Nov).
                    if (cp == 0)
                        return fail("a string cannot hold \\u0000; leave it out (no option value can hold a NUL)");
                    put_utf8(cp, out);
                    break;
                default:
                    return fail(
                        base::cat({"unknown escape \\", std::string_view(&e, 1),
                                   " in a \"...\" string; use \\\\ for a backslash, or a '...' literal string"}));
            }
        }
    }

    bool literal_string(std::string* out) {
        i_++;
        if (s_.substr(i_, 2) == "''") return fail("multi-line strings (''') are not supported; write one line");
        size_t start = i_;
        while (!at_end() && s_[i_] != '\'' && s_[i_] != '\n') i_++;
        if (at_end() || s_[i_] != '\'') return fail("string has no closing \"'\"; close it on the same line");
        *out = std::string(s_.substr(start, i_ - start));
        i_++;
        return true;
    }

    bool string(std::string* out) { return s_[i_] == '"' ? basic_string(out) : literal_string(out); }

    // Blanks, newlines and comments inside an array.
    void skip_array_space() {
        while (!at_end()) {
            char c = s_[i_];
            if (c == ' ' || c == '\t' || c == '\r') {
                i_++;
            } else if (c == '\n') {
                i_++;
                line_++;
            } else if (c == '#') {
                while (!at_end() && s_[i_] != '\n') i_++;
            } else {
                return;
            }
        }
    }

    bool array(Value* v) {
        v->type = Value::Type::Array;
        int open_line = line_;
        i_++;
        while (true) {
            skip_array_space();
            if (at_end()) {
                line_ = open_line;
                return fail("array has no closing ']'; close it after the last item");
            }
            if (s_[i_] == ']') {
                i_++;
                return true;
            }
            if (s_[i_] != '"' && s_[i_] != '\'')
                return fail("arrays hold strings only; quote each item, e.g. [\"~/.aws\", \"~/.ssh\"]");
            std::string item;
            if (!string(&item)) return false;
            v->items.push_back(std::move(item));
            skip_array_space();
            if (!at_end() && s_[i_] == ',') i_++;
            else if (!at_end() && s_[i_] != ']')
                return fail("expected ',' or ']' after an array item; separate the items with commas");
        }
    }

    bool integer(Value* v) {
        size_t start = i_;
        if (s_[i_] == '+' || s_[i_] == '-') i_++;
        std::string digits;
        bool last_digit = false;
        while (!at_end() && ((s_[i_] >= '0' && s_[i_] <= '9') || (s_[i_] == '_' && last_digit))) {
            last_digit = s_[i_] != '_';
            if (last_digit) digits += s_[i_];
            i_++;
        }
        bool bad_tail = !at_end() && (bare_char(s_[i_]) || s_[i_] == '.' || s_[i_] == ':');
        if (digits.empty() || !last_digit || bad_tail || (digits.size() > 1 && digits[0] == '0')) {
            i_ = start;
            return fail(
                "bad value; write a string in quotes (\"2G\", \"90s\"), an integer, true or false, or an "
                "array of strings");
        }
        if (digits.size() > 18) return fail("integer too large; at most 18 digits");
        v->type = Value::Type::Integer;
        v->integer = std::stoll(digits) * (s_[start] == '-' ? -1 : 1);
        return true;
    }

    bool value(Value* v) {
        if (at_end() || s_[i_] == '\n' || s_[i_] == '#')
            return fail("missing value after '='; e.g. network = \"none\", wait = true, hide = [\"~/.aws\"]");
        char c = s_[i_];
        if (c == '"' || c == '\'') {
            v->type = Value::Type::String;
            return string(&v->str);
        }
        if (c == '[') return array(v);
        if (c == '{') return fail("inline tables are not supported; use a [table] header");
        for (bool b : {true, false}) {
            std::string_view word = b ? "true" : "false";
            if (s_.substr(i_, word.size()) == word &&
                (i_ + word.size() == s_.size() || !bare_char(s_[i_ + word.size()]))) {
                i_ += word.size();
                v->type = Value::Type::Bool;
                v->boolean = b;
                return true;
            }
        }
        return integer(v);
    }

    std::string_view s_;
    ParseError* err_;
    size_t i_ = 0;
    int line_ = 1;
};

std::string quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\t') out += "\\t";
        else if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else out += static_cast<char>(c);
    }
    return out + "\"";
}

}  // namespace

bool parse(std::string_view text, Doc* doc, ParseError* err) {
    *doc = Doc{};
    return Reader(text, err).run(doc);
}

std::string to_toml(const Value& v) {
    switch (v.type) {
        case Value::Type::String: return quote(v.str);
        case Value::Type::Integer: return std::to_string(v.integer);
        case Value::Type::Bool: return v.boolean ? "true" : "false";
        case Value::Type::Array: {
            std::string out = "[";
            for (size_t k = 0; k < v.items.size(); k++) out += (k ? ", " : "") + quote(v.items[k]);
            return out + "]";
        }
    }
    return "";
}

}  // namespace base::toml
