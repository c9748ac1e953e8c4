#include <catch2/catch.hpp>
#include <string>

#include "review/diff/merge3.h"

using namespace review;

namespace {

std::string lines(int n, std::initializer_list<std::pair<int, const char*>> edits = {}) {
    std::string out;
    for (int i = 1; i <= n; i++) {
        std::string l = "l" + std::to_string(i) + "\n";
        for (const auto& [at, text] : edits)
            if (at == i) l = text;
        out += l;
    }
    return out;
}

}  // namespace

TEST_CASE("merge3: changes far apart on both sides merge cleanly", "[merge3]") {
    std::string base = lines(30);
    std::string ours = lines(30, {{3, "ours3\n"}});
    std::string theirs = lines(30, {{20, "theirs20\n"}, {28, ""}});  // one changed, one deleted
    auto m = merge3(base, ours, theirs);
    CHECK(m.conflicts.empty());
    CHECK(m.text == lines(30, {{3, "ours3\n"}, {20, "theirs20\n"}, {28, ""}}));
}

TEST_CASE("merge3: insertions shift lines and still merge", "[merge3]") {
    std::string base = lines(20);
    std::string ours = "new first\n" + base;  // everything below moves down by one
    std::string theirs = lines(20, {{15, "fifteen\n"}});
    auto m = merge3(base, ours, theirs);
    CHECK(m.conflicts.empty());
    CHECK(m.text == "new first\n" + lines(20, {{15, "fifteen\n"}}));
}

TEST_CASE("merge3: the same change on both sides is not a conflict", "[merge3]") {
    std::string base = lines(10);
    std::string both = lines(10, {{4, "same\n"}});
    auto m = merge3(base, both, lines(10, {{4, "same\n"}, {9, "nine\n"}}));
    CHECK(m.conflicts.empty());
    CHECK(m.text == lines(10, {{4, "same\n"}, {9, "nine\n"}}));
}

TEST_CASE("merge3: overlapping different changes conflict, with line ranges", "[merge3]") {
    std::string base = lines(12);
    std::string ours = lines(12, {{5, "ours5\n"}, {6, "ours6\n"}});
    std::string theirs = lines(12, {{6, "theirs6\n"}});
    auto m = merge3(base, ours, theirs);
    REQUIRE(m.conflicts.size() == 1);
    const auto& c = m.conflicts[0];
    CHECK(range_text(c.base) == "5-6");
    CHECK(range_text(c.ours) == "5-6");
    CHECK(range_text(c.theirs) == "5-6");
    CHECK(m.text == ours);  // no markers: ours kept
    auto mk = merge3(base, ours, theirs, true, {"real", "patch"});
    CHECK(mk.text == lines(4) +
                         "<<<<<<< real\nours5\nours6\n=======\nl5\ntheirs6\n>>>>>>> patch\n"
                         "l7\nl8\nl9\nl10\nl11\nl12\n");
}

TEST_CASE("merge3: adjacent changes from both sides conflict; no final newline keeps markers on lines", "[merge3]") {
    std::string base = "a\nb\nc";
    auto m = merge3(base, "a\nB\nc", "a\nb\nC", true);
    REQUIRE(m.conflicts.size() == 1);
    CHECK(m.text == "a\n<<<<<<< ours\nB\nc\n=======\nb\nC\n>>>>>>> theirs\n");
    auto clean = merge3(lines(3), lines(3), lines(3, {{2, "two\n"}}));
    CHECK(clean.conflicts.empty());
    CHECK(clean.text == lines(3, {{2, "two\n"}}));
}
