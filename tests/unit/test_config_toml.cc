// The config file's TOML subset (helper/base/toml.h): what it reads, and the
// line and fix of every error.
#include <catch2/catch.hpp>

#include "helper/base/toml.h"

using base::toml::Doc;
using base::toml::ParseError;
using base::toml::Value;

namespace {

Doc ok(const std::string& text) {
    Doc d;
    ParseError e;
    INFO(text);
    bool parsed = base::toml::parse(text, &d, &e);
    INFO(e.line << ": " << e.message);
    REQUIRE(parsed);
    return d;
}

ParseError bad(const std::string& text) {
    Doc d;
    ParseError e;
    INFO(text);
    REQUIRE_FALSE(base::toml::parse(text, &d, &e));
    return e;
}

}  // namespace

TEST_CASE("toml: tables, keys, strings, integers, booleans, arrays and comments") {
    Doc d =
        ok("# top\n"
           "network = \"none\"   # trailing comment\n"
           "\n"
           "max-pids = 512\n"
           "wait = true\n"
           "hide = ['~/.kube', \"~/a b\",]\n"
           "[run]\n"
           "quiet = false\n"
           "env-keep = [\n"
           "  \"GITHUB_TOKEN\", # why\n"
           "  'AWS_*'\n"
           "]\n"
           "timeout = \"2h\"\r\n");
    REQUIRE(d.entries.size() == 7);
    CHECK(d.entries[0].table.empty());
    CHECK(d.entries[0].key == "network");
    CHECK(d.entries[0].value.type == Value::Type::String);
    CHECK(d.entries[0].value.str == "none");
    CHECK(d.entries[0].line == 2);
    CHECK(d.entries[1].value.type == Value::Type::Integer);
    CHECK(d.entries[1].value.integer == 512);
    CHECK(d.entries[2].value.type == Value::Type::Bool);
    CHECK(d.entries[2].value.boolean);
    CHECK(d.entries[3].value.items == std::vector<std::string>{"~/.kube", "~/a b"});
    CHECK(d.entries[4].table == "run");
    CHECK_FALSE(d.entries[4].value.boolean);
    CHECK(d.entries[5].value.items == std::vector<std::string>{"GITHUB_TOKEN", "AWS_*"});
    CHECK(d.entries[5].line == 9);
    CHECK(d.entries[6].line == 13);
    REQUIRE(d.tables.size() == 1);
    CHECK(d.tables[0].name == "run");
    CHECK(d.tables[0].line == 7);
    CHECK(ok("").entries.empty());
    CHECK(ok("x = -3\ny = +1_000").entries[1].value.integer == 1000);
    CHECK(ok("x = -3").entries[0].value.integer == -3);
}

TEST_CASE("toml: basic string escapes and literal strings") {
    Doc d = ok(R"(a = "q\" b\\ n\n t\t e\u00e9 s\U0001F600"
b = 'C:\no\escape "here"'
)");
    CHECK(d.entries[0].value.str == "q\" b\\ n\n t\t e\xc3\xa9 s\xf0\x9f\x98\x80");
    CHECK(d.entries[1].value.str == "C:\\no\\escape \"here\"");
    CHECK(base::toml::to_toml(d.entries[0].value) == "\"q\\\" b\\\\ n\\n t\\t e\xc3\xa9 s\xf0\x9f\x98\x80\"");
    Value arr{Value::Type::Array, "", 0, false, {"a", "b\"c"}};
    CHECK(base::toml::to_toml(arr) == "[\"a\", \"b\\\"c\"]");
}

TEST_CASE("toml: every error names its line and the fix") {
    struct Case {
        const char* text;
        int line;
        const char* says;
    };
    const Case cases[] = {
        {"a = 1\nb = \"open\n", 2, "no closing '\"'"},
        {"a = 1\n\nnetwork none\n", 3, "expected '=' after 'network'; write key = value"},
        {"x =\n", 1, "missing value after '='"},
        {"x = 1.5\n", 1, "bad value; write a string in quotes"},
        {"x = 2G\n", 1, "bad value; write a string in quotes (\"2G\""},
        {"x = 1979-05-27\n", 1, "bad value"},
        {"x = 007\n", 1, "bad value"},
        {"x = {a = 1}\n", 1, "inline tables are not supported"},
        {"x = [1, 2]\n", 1, "arrays hold strings only"},
        {"x = [\"a\" \"b\"]\n", 1, "expected ',' or ']'"},
        {"\nx = [\"a\",\n", 2, "array has no closing ']'"},
        {"x = \"a\" y = 1\n", 1, "unexpected text after the value"},
        {"x = \"\\q\"\n", 1, "unknown escape \\q"},
        {"x = \"\\u12\"\n", 1, "bad \\u escape"},
        {"x = \"\\ud800\"\n", 1, "bad \\u escape"},
        {"x = \"a\\u0000b\"\n", 1, "cannot hold \\u0000"},  // cut every message quoting it short
        {"x = \"\\U00000000\"\n", 1, "cannot hold \\u0000"},
        {"x = \"\"\"a\"\"\"\n", 1, "multi-line strings"},
        {"[run\n", 1, "closing ']'"},
        {"[[run]]\n", 1, "arrays of tables"},
        {"[run.x]\n", 1, "quoted and dotted names are not supported"},
        {"a.b = 1\n", 1, "quoted and dotted names"},
        {"\"a\" = 1\n", 1, "expected a key"},
        {"a = 1\na = 2\n", 2, "key 'a' is set twice"},
        {"[run]\n[run]\n", 2, "table [run] appears twice"},
        {"a = \"tab\x01\"\n", 1, "control character"},
        {"a = 1234567890123456789\n", 1, "integer too large"},
    };
    for (const auto& c : cases) {
        ParseError e = bad(c.text);
        INFO(c.text << " -> " << e.line << ": " << e.message);
        CHECK(e.line == c.line);
        CHECK(e.message.find(c.says) != std::string::npos);
        CHECK(e.message.find("; ") != std::string::npos);
    }
}
