#include <catch2/catch.hpp>
#include <string>

#include "review/diff/format.h"
#include "review/diff/hunks.h"

using namespace review;

namespace {

// Lines "l1\n".."lN\n", with some replaced.
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

Side file(std::string data) {
    Side s;
    s.exists = true;
    s.mode = kGitRegular;
    s.size = data.size();
    s.data = std::move(data);
    return s;
}

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
