#include <catch2/catch.hpp>
#include <string>

#include "review/diff/format.h"
#include "review/diff/hunks.h"
#include "review/diff/merge3.h"
#include "tests/unit/text_lines.h"

using namespace review;

namespace {

Side file(const std::string& data) { return Side{true, kGitRegular, data, true, data.size()}; }

size_t count_of(const std::string& s, const std::string& what) {
    size_t n = 0;
    for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) n++;
    return n;
}

}  // namespace

TEST_CASE("hunks: changes far apart are separate hunks, near ones share one", "[hunks]") {
    std::string old_text = lines(40);
    // Lines 2, 20 and 24 (20 and 24: 3 unchanged lines apart, one hunk), 38.
    std::string new_text = lines(40, {{2, "two\n"}, {20, "twenty\n"}, {24, "x\n"}, {38, "end\n"}});
    CHECK(count_hunks(old_text, new_text) == 3);
    CHECK(count_hunks(old_text, old_text) == 0);
    CHECK(count_hunks(old_text, new_text, 0) == 4);
}

TEST_CASE("hunks: applying a subset changes only those hunks' lines", "[hunks]") {
    std::string old_text = lines(40);
    std::string new_text = lines(40, {{2, "two\n"}, {20, "twenty\n"}, {24, "x\n"}, {38, "end\n"}});
    CHECK(apply_hunks(old_text, new_text, {true, false, false}) == lines(40, {{2, "two\n"}}));
    CHECK(apply_hunks(old_text, new_text, {false, true, false}) == lines(40, {{20, "twenty\n"}, {24, "x\n"}}));
    CHECK(apply_hunks(old_text, new_text, {true, false, true}) == lines(40, {{2, "two\n"}, {38, "end\n"}}));
    CHECK(apply_hunks(old_text, new_text, {true, true, true}) == new_text);
    CHECK(apply_hunks(old_text, new_text, {false, false, false}) == old_text);
}

TEST_CASE("hunks: insertions, deletions and a missing final newline", "[hunks]") {
    std::string old_text = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn";
    std::string new_text = "new\na\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\nn\n";  // one added, newline at the end
    REQUIRE(count_hunks(old_text, new_text) == 2);
    CHECK(apply_hunks(old_text, new_text, {true, false}) == "new\n" + old_text);
    CHECK(apply_hunks(old_text, new_text, {false, true}) == old_text + "\n");
    std::string deleted = "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n";  // the last line removed
    REQUIRE(count_hunks(old_text, deleted) == 1);
    CHECK(apply_hunks(old_text, deleted, {true}) == deleted);
}

TEST_CASE("hunks: the remainder after a partial apply is exactly the hunks left", "[hunks]") {
    std::string old_text = lines(60);
    std::string new_text = lines(60, {{5, "five\n"}, {25, "tw5\n"}, {45, "f5\n"}, {58, "e8\n"}});
    REQUIRE(count_hunks(old_text, new_text) == 4);
    std::string mid = apply_hunks(old_text, new_text, {true, false, true, false});
    CHECK(count_hunks(mid, new_text) == 2);
    CHECK(apply_hunks(mid, new_text, {true, true}) == new_text);
}

TEST_CASE("hunks: --hunk-numbers puts N where git's section heading goes", "[hunks]") {
    FileDiff f{"f.txt", file(lines(40)), file(lines(40, {{2, "two\n"}, {30, "thirty\n"}}))};
    Style st;
    st.hunk_numbers = true;
    std::string out = render_file(f, st);
    CHECK(out.find("@@ -1,5 +1,5 @@ hunk 1\n") != std::string::npos);
    CHECK(out.find("@@ -27,7 +27,7 @@ hunk 2\n") != std::string::npos);
    // Without the flag the output is unchanged (and the same hunks).
    std::string plain = render_file(f, Style{});
    CHECK(count_of(plain, "@@ -") == 2);
    CHECK(plain.find(" hunk ") == std::string::npos);
}

TEST_CASE("hunks: PATH:N[,M] parsing and choices", "[hunks]") {
    auto p = parse_hunk_pick("dir/a:b.txt:2,5");
    REQUIRE(p.ok());
    CHECK(p->path == "dir/a:b.txt");
    CHECK(p->numbers == std::vector<size_t>{2, 5});
    CHECK(!parse_hunk_pick("f.txt").ok());
    CHECK(!parse_hunk_pick("f.txt:").ok());
    CHECK(!parse_hunk_pick("f.txt:0").ok());
    CHECK(!parse_hunk_pick("f.txt:1,,2").ok());
    CHECK(!parse_hunk_pick("f.txt:x").ok());
    CHECK(!parse_hunk_pick(":1").ok());

    auto take = choose_hunks("f", HunkChoice{{1, 3}, {}}, 4);
    REQUIRE(take.ok());
    CHECK(*take == std::vector<bool>{true, false, true, false});
    auto leave = choose_hunks("f", HunkChoice{{}, {2}}, 3);
    REQUIRE(leave.ok());
    CHECK(*leave == std::vector<bool>{true, false, true});
    auto missing = choose_hunks("f", HunkChoice{{5}, {}}, 4);
    REQUIRE(!missing.ok());
    CHECK(missing.error().message.find("has 4 hunks, no hunk 5") != std::string::npos);
}

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

TEST_CASE("merge budget: files in turn until the total; one past it is skipped, a smaller one after still fits",
          "[merge3]") {
    constexpr uint64_t M = 1ull << 20;
    MergeBudget b;
    CHECK(b.take(64 * M, 64 * M - 10));  // one file of the biggest size fits alone
    CHECK_FALSE(b.take(5, 6));
    CHECK(b.take(4, 6));  // exactly the total
    CHECK(b.used == kMaxMergeTotal);
    MergeBudget c;
    CHECK_FALSE(c.take(kMaxMerge + 1, 0));  // over the per-file limit: never a merge, nothing counted
    CHECK(c.used == 0);
    CHECK(c.take(50 * M, 50 * M));
    CHECK_FALSE(c.take(20 * M, 20 * M));
    CHECK(c.take(10 * M, 18 * M));
    CHECK(over_merge_budget("proj/g") ==
          "not merged: with the files merged before it its merge would pass the 128 MiB "
          "that merges may hold together (both sides of each file); apply it on its own "
          "to merge it (--only proj/g)");
}
