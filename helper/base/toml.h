// A reader for the small TOML subset layover's config file uses (docs/cli.md,
// "Config file"): [table] headers, bare keys, basic "..." strings (escapes
// \" \\ \n \t \r \b \f \uXXXX \UXXXXXXXX), literal '...' strings, decimal
// integers, true/false, arrays of strings (which may span lines), and #
// comments. Anything else (floats, dates, inline tables, dotted or quoted
// keys, multi-line strings) is an error naming the line and the fix. Pure:
// text in, entries out.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace base::toml {

struct Value {
    enum class Type { String, Integer, Bool, Array } type = Type::String;
    std::string str;                 // String
    long long integer = 0;           // Integer
    bool boolean = false;            // Bool
    std::vector<std::string> items;  // Array (of strings)
};

struct Entry {
    std::string table;  // "" for a top-level key
    std::string key;
    Value value;
    int line = 0;  // 1-based line of the key
};

struct Doc {
    std::vector<Entry> entries;  // in file order
    struct Table {
        std::string name;
        int line = 0;
    };
    std::vector<Table> tables;  // headers in file order
};

struct ParseError {
    int line = 0;
    std::string message;  // what is wrong, then "; " and the fix
};

// True and *doc filled, or false and *err set (the first error only).
bool parse(std::string_view text, Doc* doc, ParseError* err);

// A value written back as TOML: "a \"b\"", 12, true, ["x", "y"].
std::string to_toml(const Value& v);

}  // namespace base::toml
