#include <catch2/catch.hpp>

#include "helper/base/gitignore.h"
#include "helper/base/glob.h"

using base::glob_match;
using base::PathFilter;

TEST_CASE("base glob: * and ? stay within one component") {
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

TEST_CASE("base glob: ** spans any number of components") {
    CHECK(glob_match("**/*.log", "a.log"));
    CHECK(glob_match("**/*.log", "x/y/z.log"));
    CHECK(glob_match("build/**", "build/a/b"));
    CHECK(glob_match("a/**/b", "a/b"));
    CHECK(glob_match("a/**/b", "a/x/y/b"));
    CHECK_FALSE(glob_match("a/**/b", "a/x/y/c"));
}

TEST_CASE("base glob: classes, negation, escapes and malformed brackets") {
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

TEST_CASE("base glob: bytes that are not UTF-8 match literally") {
    std::string name = "bad\xff\xfe.txt";
    CHECK(glob_match("bad*.txt", name));
    CHECK(glob_match("*", name));
}

TEST_CASE("base glob: --exclude without a slash matches any component, and excludes subtrees") {
    PathFilter f({}, {"*.log", "node_modules"});
    CHECK_FALSE(f.selects("a.log"));
    CHECK_FALSE(f.selects("deep/er/x.log"));
    CHECK_FALSE(f.selects("src/node_modules/pkg/index.js"));
    CHECK(f.selects("src/main.c"));
    CHECK(f.selects("logs"));
}

TEST_CASE("base glob: --exclude with a slash is anchored at the target root") {
    PathFilter f({}, {"docs/*.md", "/build"});
    CHECK_FALSE(f.selects("docs/a.md"));
    CHECK(f.selects("other/docs/a.md"));
    CHECK_FALSE(f.selects("build/x/y"));
    CHECK(f.selects("src/build"));
}

TEST_CASE("base glob: an anchored glob selects as if each ancestor were tried in turn") {
    // The definition glob_selects is an optimized form of.
    auto by_ancestors = [](std::string_view g, std::string_view path) {
        bool anchored = g.find('/') != std::string_view::npos;
        std::string_view pat = g;
        while (anchored && pat.size() > 1 && pat.back() == '/') pat.remove_suffix(1);
        if (anchored && !pat.empty() && pat[0] == '/') pat.remove_prefix(1);
        for (size_t end = 0;;) {
            size_t slash = path.find('/', end);
            std::string_view prefix = path.substr(0, slash), last = prefix.substr(end);
            if (anchored ? glob_match(pat, prefix) : glob_match(pat, last)) return true;
            if (slash == std::string_view::npos) return false;
            end = slash + 1;
        }
    };
    for (const char* g : {"**", "**/a", "a/**", "a/**/b", "**/a/**", "a/*/b", "a/[/]b", "a\\/b", "*/", "/a/**", "a//b",
                          "**/", "a/**/**/b", "*", "a", "?/?", "[!/]/b", "**/b/", "a*/**/*b"})
        for (const char* path :
             {"a", "a/b", "a/x/b", "x/a/b/c", "a//b", "a/b/", "", "b/a", "a[/]b", "ab/cb", "a/b/b"}) {
            INFO(g << " vs " << path);
            CHECK(base::glob_selects(g, path) == by_ancestors(g, path));
        }
}

TEST_CASE("base glob: ** globs against a 3,000-deep path take one pass (fuzzing found minutes)") {
    // Each ancestor was matched in turn, each match O(P x S^2): a 5,000-deep
    // patch with --exclude '**/x/**/y' ran for minutes.
    std::string deep = "d";
    for (int i = 1; i < 3000; i++) deep += "/d";
    PathFilter f({}, {"**/x/**/y"});
    CHECK(f.selects(deep));
    CHECK_FALSE(f.selects(deep + "/x/e/y/f"));
    CHECK_FALSE(PathFilter({}, {"d/d/*"}).selects(deep));
    CHECK(PathFilter({}, {"d/e/*"}).selects(deep));
    CHECK(glob_match("**/d/**/d", deep));
    CHECK_FALSE(glob_match("**/d/**/e", deep));
}

TEST_CASE("base glob: --only selects paths and their subtrees; ancestors are needed, not selected") {
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

TEST_CASE("base glob: --exclude wins over --only") {
    PathFilter f({"src"}, {"*.o"});
    CHECK(f.selects("src/a.c"));
    CHECK_FALSE(f.selects("src/a.o"));
    CHECK_FALSE(f.needed("src/a.o"));
}

TEST_CASE("base glob: path helpers") {
    CHECK(base::path_is_under("a/b", "a"));
    CHECK(base::path_is_under("a", "a"));
    CHECK_FALSE(base::path_is_under("ab", "a"));
    CHECK(base::normalize_rel("./a/b/") == "a/b");
    CHECK(base::normalize_rel(".") == "");
}

TEST_CASE("base glob: --only and PATH... take globs; note() makes their new parents needed") {
    PathFilter f({"*.py", "docs/"}, {});
    CHECK(f.selects("a.py"));
    CHECK(f.selects("new/deep/b.py"));
    CHECK(f.selects("docs/x.md"));
    CHECK_FALSE(f.selects("new"));
    CHECK_FALSE(f.needed("new"));
    f.note("new/deep/b.py");
    f.note("other/c.txt");  // not selected: its parents stay unneeded
    CHECK(f.needed("new"));
    CHECK(f.needed("new/deep"));
    CHECK(f.selects_strictly_beneath("new"));
    CHECK_FALSE(f.needed("other"));
    PathFilter lit({"a[1].txt"}, {});  // a name with glob bytes still selects itself
    CHECK(lit.selects("a[1].txt"));
    CHECK(base::has_glob_chars("*.py"));
    CHECK_FALSE(base::has_glob_chars("src/main.c"));
}

TEST_CASE("base glob: an --only pattern whose specials are all escaped names one path, not a glob") {
    // A file named `*` the agent made, passed back by a program that meant that one path.
    PathFilter star({"\\*"}, {});
    CHECK(star.selects("*"));
    CHECK(star.selects("*/inside"));
    CHECK_FALSE(star.selects("evil.sh"));
    CHECK_FALSE(star.selects("sub/*"));  // a path, not a name anywhere
    CHECK(star.needed("*"));
    PathFilter deep({"d/\\[x]\\\\y\\?"}, {});
    CHECK(deep.selects("d/[x]\\y?"));
    CHECK(deep.needed("d"));
    CHECK_FALSE(deep.selects("d/xy?"));
    CHECK(base::escaped_literal("/\\*") == std::optional<std::string>("*"));  // the hunk walk's anchored form
    CHECK(base::escaped_literal("a\\*b") == std::optional<std::string>("a*b"));
    CHECK_FALSE(base::escaped_literal("a\\**").has_value());
    CHECK_FALSE(base::escaped_literal("*.py").has_value());
    PathFilter glob({"*"}, {});  // unescaped: still a glob
    CHECK(glob.selects("evil.sh"));
}

TEST_CASE("base gitignore: names anywhere, anchored paths, dir-only rules") {
    base::IgnoreRules r;
    r.add_text("# a comment\n\n*.pyc\n__pycache__/\n/build\ndocs/*.tmp\n");
    CHECK(r.size() == 4);
    CHECK(r.ignored("x.pyc", false));
    CHECK(r.ignored("a/b/x.pyc", false));
    CHECK(r.ignored("pkg/__pycache__", true));
    CHECK_FALSE(r.ignored("pkg/__pycache__", false));  // a file of that name is not a dir
    CHECK(r.ignored("pkg/__pycache__/m.cpython-311.pyc", false));
    CHECK(r.ignored("build", true));
    CHECK(r.ignored("build/out.o", false));
    CHECK_FALSE(r.ignored("src/build", true));  // anchored at the root
    CHECK(r.ignored("docs/a.tmp", false));
    CHECK_FALSE(r.ignored("x/docs/a.tmp", false));
    CHECK_FALSE(r.ignored("main.py", false));
    CHECK_FALSE(r.ignored("# a comment", false));
}

TEST_CASE("base gitignore: negation re-includes, the last rule wins") {
    base::IgnoreRules r;
    r.add_text("*.log\n!keep.log\n");
    CHECK(r.ignored("a.log", false));
    CHECK_FALSE(r.ignored("keep.log", false));
    CHECK_FALSE(r.ignored("d/keep.log", false));
    r.add_line("keep.log");  // a later rule wins again
    CHECK(r.ignored("keep.log", false));
}

TEST_CASE("base gitignore: beneath an ignored dir nothing can be re-included") {
    base::IgnoreRules r;
    r.add_text("cache/\n!cache/important\n");
    CHECK(r.ignored("cache", true));
    CHECK(r.match("cache/important", false) == false);  // the rule alone would re-include it...
    CHECK(r.ignored("cache/important", false));         // ...but its parent dir is ignored
    base::IgnoreRules inside;
    inside.add_text("out/**\n!out/keep\n");  // "out/**": what is inside, not out itself
    CHECK_FALSE(inside.ignored("out", true));
    CHECK(inside.ignored("out/x", false));
    CHECK_FALSE(inside.ignored("out/keep", false));
}

TEST_CASE("base gitignore: escapes, trailing spaces, ** and CRLF") {
    base::IgnoreRules r;
    r.add_line("\\#*#");    // emacs autosaves, not a comment
    r.add_line("\\!bang");  // a literal '!'
    r.add_line("trail   ");
    r.add_line("sp\\ ");
    r.add_line("a/**/z");
    r.add_line("**/gen\r");
    CHECK(r.ignored("#notes.txt#", false));
    CHECK(r.ignored("!bang", false));
    CHECK(r.ignored("trail", false));
    CHECK(r.ignored("sp ", false));
    CHECK_FALSE(r.ignored("sp", false));
    CHECK(r.ignored("a/z", false));
    CHECK(r.ignored("a/b/c/z", false));
    CHECK(r.ignored("x/y/gen", true));
    CHECK(r.ignored("gen", false));
    base::IgnoreRules empty;
    empty.add_text("\n#only comments\n   \n!\n/\n");
    CHECK(empty.empty());
}

TEST_CASE("base gitignore: name patterns compared without the glob matcher agree with it") {
    // NAME, *NAME and NAME* take a short path (docs/performance.md, "Status, fifth pass"); the
    // glob matcher is the reference, for each rule alone, on names at any depth.
    const char* patterns[] = {"*.pyc", ".#*", "*~", "*", "Makefile", "a*", "*a", "x.y", "*.tar.gz", "\\#*#", "*.p?c"};
    const char* paths[] = {"x.pyc", "d/x.pyc",  "x.pyc.bak", ".pyc",     ".#lock", "d/.#x", "a.#",
                           "f~",    "~f",       "a",         "ab",       "ba",     "x.y",   "d/x.y",
                           "xy",    "Makefile", "makefile",  "t.tar.gz", "gz",     "#a#",   "d/a.pic"};
    for (const char* p : patterns) {
        base::IgnoreRules r;
        r.add_line(p);
        for (const char* path : paths) {
            std::string_view s(path);
            std::string_view name = s.substr(s.rfind('/') == std::string_view::npos ? 0 : s.rfind('/') + 1);
            INFO(p << " on " << path);
            CHECK(r.match(path, false) == base::glob_match(p, name));
        }
    }
}

TEST_CASE("base glob: a PATH argument covers what it selects and the deleted dir above it") {
    auto covers = [](const std::string& arg, const std::string& path) {
        return base::arg_covers(base::PathFilter({arg}, {}), arg, path);
    };
    CHECK(covers("src", "src/a.c"));       // a directory brings its subtree
    CHECK(covers("src/a.c", "src"));       // inside a dir deleted whole: that deletion's
    CHECK(covers("*.c", "src/a.c"));       // a glob
    CHECK_FALSE(covers("sr", "src/a.c"));  // a prefix of a name is no match
    CHECK_FALSE(covers("src", "srcx"));
    CHECK_FALSE(covers("srcx/a", "src"));
}

TEST_CASE("glob: has_ancestor_in finds a proper ancestor dir only") {
    std::set<std::string, std::less<>> dirs{"a", "x/y"};
    CHECK(base::has_ancestor_in("a/b", dirs));
    CHECK(base::has_ancestor_in("a/b/c", dirs));
    CHECK(base::has_ancestor_in("x/y/z", dirs));
    CHECK_FALSE(base::has_ancestor_in("a", dirs));     // itself is no ancestor
    CHECK_FALSE(base::has_ancestor_in("ab/c", dirs));  // a name sharing a prefix
    CHECK_FALSE(base::has_ancestor_in("x/z", dirs));
    CHECK_FALSE(base::has_ancestor_in("/a", dirs));  // no empty first component
}
