#include <catch2/catch.hpp>

#include "review/apply/glob.h"

using review::glob_match;
using review::PathFilter;

TEST_CASE("review glob: * and ? stay within one component") {
    CHECK(glob_match("*.log", "a.log"));
    CHECK_FALSE(glob_match("*.log", "d/a.log"));
    CHECK(glob_match("d/*.log", "d/a.log"));
    CHECK(glob_match("?.txt", "a.txt"));
    CHECK_FALSE(glob_match("?", "/"));
    CHECK_FALSE(glob_match("a*", "a/b"));
    CHECK(glob_match("*", ""));
    CHECK(glob_match("a*b*c", "aXXbYYc"));
    CHECK_FALSE(glob_match("a*b*c", "aXXbYY"));
}

TEST_CASE("review glob: ** spans any number of components") {
    CHECK(glob_match("**/*.log", "a.log"));
    CHECK(glob_match("**/*.log", "x/y/z.log"));
    CHECK(glob_match("build/**", "build/a/b"));
    CHECK(glob_match("a/**/b", "a/b"));
    CHECK(glob_match("a/**/b", "a/x/y/b"));
    CHECK_FALSE(glob_match("a/**/b", "a/x/y/c"));
}

TEST_CASE("review glob: classes, negation, escapes and malformed brackets") {
    CHECK(glob_match("[abc].txt", "b.txt"));
    CHECK_FALSE(glob_match("[abc].txt", "d.txt"));
    CHECK(glob_match("[a-c]x", "bx"));
    CHECK(glob_match("[!a-c]x", "dx"));
    CHECK_FALSE(glob_match("[!a-c]x", "ax"));
    CHECK(glob_match("\\*", "*"));
    CHECK_FALSE(glob_match("\\*", "a"));
    CHECK(glob_match("[", "["));
    CHECK(glob_match("a[", "a["));
}

TEST_CASE("review glob: bytes that are not UTF-8 match literally") {
    std::string name = "bad\xff\xfe.txt";
    CHECK(glob_match("bad*.txt", name));
    CHECK(glob_match("*", name));
}

TEST_CASE("review glob: --exclude without a slash matches any component, and excludes subtrees") {
    PathFilter f({}, {"*.log", "node_modules"});
    CHECK_FALSE(f.selects("a.log"));
    CHECK_FALSE(f.selects("deep/er/x.log"));
    CHECK_FALSE(f.selects("src/node_modules/pkg/index.js"));
    CHECK(f.selects("src/main.c"));
    CHECK(f.selects("logs"));
}

TEST_CASE("review glob: --exclude with a slash is anchored at the target root") {
    PathFilter f({}, {"docs/*.md", "/build"});
    CHECK_FALSE(f.selects("docs/a.md"));
    CHECK(f.selects("other/docs/a.md"));
    CHECK_FALSE(f.selects("build/x/y"));
    CHECK(f.selects("src/build"));
}

TEST_CASE("review glob: --only selects paths and their subtrees; ancestors are needed, not selected") {
    PathFilter f({"./src/lib/", "README"}, {});
    CHECK(f.selects("src/lib"));
    CHECK(f.selects("src/lib/a.c"));
    CHECK_FALSE(f.selects("src/libx"));
    CHECK_FALSE(f.selects("src"));
    CHECK(f.needed("src"));
    CHECK(f.selects_strictly_beneath("src"));
    CHECK_FALSE(f.selects_strictly_beneath("src/lib"));
    CHECK(f.selects("README"));
    CHECK_FALSE(f.selects("README.md"));
    CHECK_FALSE(f.needed("other"));
}

TEST_CASE("review glob: --exclude wins over --only") {
    PathFilter f({"src"}, {"*.o"});
    CHECK(f.selects("src/a.c"));
    CHECK_FALSE(f.selects("src/a.o"));
    CHECK_FALSE(f.needed("src/a.o"));
}

TEST_CASE("review glob: path helpers") {
    CHECK(review::path_is_under("a/b", "a"));
    CHECK(review::path_is_under("a", "a"));
    CHECK_FALSE(review::path_is_under("ab", "a"));
    CHECK(review::normalize_rel("./a/b/") == "a/b");
    CHECK(review::normalize_rel(".") == "");
}
