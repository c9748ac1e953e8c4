#include <catch2/catch.hpp>
#include <string>

#include "review/diff/pieces.h"
#include "tests/unit/text_lines.h"

using namespace review;

namespace {

// The text of a result that must be ok.
std::string text(base::Result<std::string> r) {
    REQUIRE(r.ok());
    return std::move(r).value();
}

std::vector<char> all(size_t n, char v) { return std::vector<char>(n, v); }

}  // namespace

TEST_CASE("apply -p pieces: the unsplit pieces are the diff's hunks, and taking them is apply_hunks", "[pieces]") {
    std::string a = lines(40), b = lines(40, {{5, "five\n"}, {30, "thirty\n"}});
    FileHunks f;
    diff_file(f, a, b);
    auto p = hunk_pieces(f);
    REQUIRE(p.size() == 2);
    REQUIRE(p.size() == count_hunks(a, b));
    CHECK(render_piece(f, p[0]) == "@@ -2,7 +2,7 @@\n l2\n l3\n l4\n-l5\n+five\n l6\n l7\n l8\n");
    for (auto take : {std::vector<char>{1, 0}, std::vector<char>{0, 1}, std::vector<char>{1, 1}}) {
        std::vector<bool> tb(take.begin(), take.end());
        CHECK(text(apply_pieces(f, p, take)) == apply_hunks(a, b, tb));
    }
    CHECK(text(apply_pieces(f, p, all(2, 0))) == a);
}

TEST_CASE("apply -p split: one piece per change group, at the unchanged lines between, as git", "[pieces]") {
    // Changes at 10 and 14: three unchanged lines between, one hunk of the diff.
    std::string a = lines(30), b = lines(30, {{10, "ten\n"}, {14, "fourteen\n"}});
    FileHunks f;
    diff_file(f, a, b);
    auto p = hunk_pieces(f);
    REQUIRE(p.size() == 1);
    auto parts = split_piece(f, p[0]);
    REQUIRE(parts.size() == 2);
    CHECK(parts[0].split);
    CHECK(parts[0].hunk == 0);
    CHECK(render_piece(f, parts[0]) == "@@ -7,7 +7,7 @@\n l7\n l8\n l9\n-l10\n+ten\n l11\n l12\n l13\n");
    CHECK(render_piece(f, parts[1]) == "@@ -11,7 +11,7 @@\n l11\n l12\n l13\n-l14\n+fourteen\n l15\n l16\n l17\n");
    CHECK(text(apply_pieces(f, parts, {1, 0})) == lines(30, {{10, "ten\n"}}));
    CHECK(text(apply_pieces(f, parts, {0, 1})) == lines(30, {{14, "fourteen\n"}}));
    CHECK(text(apply_pieces(f, parts, {1, 1})) == b);
    // Adjacent changed lines are one group: no split.
    FileHunks g;
    diff_file(g, lines(10), lines(10, {{4, "x\n"}, {5, "y\n"}}));
    auto q = hunk_pieces(g);
    CHECK(split_piece(g, q[0]).size() == 1);
    // Context stays within the piece: one unchanged line between two changes.
    FileHunks h;
    diff_file(h, lines(10), lines(10, {{4, "x\n"}, {6, "y\n"}}));
    auto r = split_piece(h, hunk_pieces(h)[0]);
    REQUIRE(r.size() == 2);
    CHECK(r[0].a1 == 5);  // trailing context: line 5 only (0-based end)
    CHECK(r[1].a0 == 4);
}

TEST_CASE("apply -p edit: the edited hunk must keep its old lines; only what it changes is applied", "[pieces]") {
    std::string a = lines(20), b = lines(20, {{10, "ten\n"}});
    FileHunks f;
    diff_file(f, a, b);
    auto p = hunk_pieces(f);
    REQUIRE(p.size() == 1);
    std::string hunk = render_piece(f, p[0]);
    // '+ten' changed to '+TEN', a comment added: applies.
    std::string ed = hunk.substr(hunk.find('\n') + 1);
    ed.replace(ed.find("+ten"), 4, "+TEN");
    auto e = parse_edited(f, p[0], "# note\n" + ed);
    REQUIRE(e.ok());
    p[0].edited = *e;
    CHECK(text(apply_pieces(f, p, {1})) == lines(20, {{10, "TEN\n"}}));
    // The '-' line made context and the '+' line kept: an insertion.
    std::string keep = ed;
    keep.replace(keep.find("-l10"), 1, " ");
    auto k = parse_edited(f, p[0], keep);
    REQUIRE(k.ok());
    p[0].edited = *k;
    CHECK(text(apply_pieces(f, p, {1})) == lines(20, {{10, "l10\nTEN\n"}}));
    // A context line changed: refused, saying why.
    std::string bad = ed;
    bad.replace(bad.find(" l8"), 3, " L8");
    auto x = parse_edited(f, p[0], bad);
    REQUIRE(!x.ok());
    CHECK(x.error().message.find("no longer applies") != std::string::npos);
    auto y = parse_edited(f, p[0], "garbage\n");
    REQUIRE(!y.ok());
    CHECK(y.error().message.find("line 1") != std::string::npos);
}

TEST_CASE("apply -p pieces: a last line without a newline renders and edits back", "[pieces]") {
    std::string a = "x\ny", b = "x\nz";
    FileHunks f;
    diff_file(f, a, b);
    auto p = hunk_pieces(f);
    REQUIRE(p.size() == 1);
    std::string r = render_piece(f, p[0]);
    CHECK(r == "@@ -1,2 +1,2 @@\n x\n-y\n\\ No newline at end of file\n+z\n\\ No newline at end of file\n");
    auto e = parse_edited(f, p[0], r.substr(r.find('\n') + 1));
    REQUIRE(e.ok());
    CHECK(*e == "x\nz");
}
