#include <catch2/catch.hpp>

#include "capture/scan/entry/ignore.h"
#include "capture/scan/entry/summary.h"

using capture::default_ignore_lines;

namespace {
base::IgnoreRules rules_of(const std::vector<std::string>& lines) {
    base::IgnoreRules r;
    for (const auto& l : lines) r.add_line(l);
    return r;
}
}  // namespace

TEST_CASE("capture ignore: home caches anchor at the home when the target is the home") {
    auto r = rules_of(default_ignore_lines("/home/u", "/home/u/"));
    CHECK(r.ignored(".cache", true));
    CHECK(r.ignored(".cache/pip/http/x", false));
    CHECK(r.ignored(".npm/_cacache/index", false));
    CHECK(r.ignored(".cargo/registry/cache/x.crate", false));
    CHECK(r.ignored(".gradle/caches/modules", true));
    CHECK_FALSE(r.ignored("proj/.cache", true));  // a project's .cache is not the home's
    CHECK_FALSE(r.ignored(".npm/config", false));
    CHECK(r.ignored("proj/pkg/__pycache__/m.cpython-311.pyc", false));
    CHECK(r.ignored("proj/.pytest_cache", true));
    CHECK(r.ignored("proj/.mypy_cache", true));
    CHECK(r.ignored("notes.txt.swp", false));
    CHECK(r.ignored("notes.txt~", false));
    CHECK(r.ignored(".#notes.txt", false));
    CHECK(r.ignored("#notes.txt#", false));
    CHECK_FALSE(r.ignored("notes.txt", false));
}

TEST_CASE("capture ignore: a target above the home anchors there; a project has no home caches") {
    auto above = rules_of(default_ignore_lines("/home", "/home/u"));
    CHECK(above.ignored("u/.cache", true));
    CHECK_FALSE(above.ignored(".cache", true));
    auto root = rules_of(default_ignore_lines("/", "/home/u"));
    CHECK(root.ignored("home/u/.cache/x", false));
    auto project = rules_of(default_ignore_lines("/home/u/proj", "/home/u"));
    CHECK_FALSE(project.ignored(".cache", true));
    CHECK(project.ignored("__pycache__", true));
    auto odd = rules_of(default_ignore_lines("/srv", "/srv/we*rd"));  // glob bytes in the home are literal
    CHECK(odd.ignored("we*rd/.cache", true));
    CHECK_FALSE(odd.ignored("weXrd/.cache", true));
}

TEST_CASE("capture ignore: the flags and the summary line") {
    capture::IgnoreOptions o;
    std::string err;
    const char* argv[] = {
        "status", "--ignore", "build/", "--ignore=*.log", "--include-ignored", "--no-default-ignores", "--ignore"};
    int argc = 7;
    int i = 1;
    CHECK(capture::parse_ignore_flag(argc, const_cast<char**>(argv), &i, &o, &err) == 1);
    CHECK(i == 2);
    for (i = 3; i < 6; i++) CHECK(capture::parse_ignore_flag(argc, const_cast<char**>(argv), &i, &o, &err) == 1);
    CHECK(o.globs == std::vector<std::string>{"build/", "*.log"});
    CHECK(o.include_ignored);
    CHECK(o.no_defaults);
    i = 6;
    CHECK(capture::parse_ignore_flag(argc, const_cast<char**>(argv), &i, &o, &err) == -1);
    CHECK(err.find("--ignore needs a glob") != std::string::npos);
    i = 0;
    CHECK(capture::parse_ignore_flag(argc, const_cast<char**>(argv), &i, &o, &err) == 0);
    CHECK(capture::ignored_line(1234) == "+ 1,234 paths in ignored caches (--include-ignored to show them)");
    CHECK(capture::ignored_line(1) == "+ 1 path in ignored caches (--include-ignored to show them)");
    std::string text = capture::summary_text({}, {}, true, 3);
    CHECK(text == "+ 3 paths in ignored caches (--include-ignored to show them)\nno changes\n");
}
