#include <catch2/catch.hpp>

#include "review/prompt/io.h"
#include "review/prompt/text.h"

using capture::Change;
using capture::Kind;
using capture::Type;

namespace {

Change ch(const std::string& path, Kind k, Type t, Type old = Type::None, uint32_t mode = 0644) {
    Change c;
    c.path = path;
    c.kind = k;
    c.type = t;
    c.old_type = old;
    c.mode = mode;
    c.old_mode = old == Type::None ? 0 : 0644;
    return c;
}

}  // namespace

TEST_CASE("review prompt: the summary lists every change and marks the risky ones") {
    std::vector<Change> v{ch("notes.txt", Kind::Modified, Type::File, Type::File),
                          ch(".bashrc", Kind::Added, Type::File), ch("old", Kind::Deleted, Type::None, Type::Dir),
                          ch("bad\nname", Kind::Added, Type::File)};
    size_t risky = 0;
    std::string s = review::summary_text(v, review::RiskContext{std::string()}, false, &risky);
    CHECK(s ==
          "  M  notes.txt\n"
          "  A  .bashrc  ! shell startup file\n"
          "  D  old/\n"
          "  A  \"bad\\nname\"\n"
          "4 changes: 2 added, 1 modified, 1 deleted; 1 marked ! need a careful look\n");
    CHECK(risky == 1);
    std::string colored = review::summary_text(v, review::RiskContext{std::string()}, true);
    CHECK(colored.find("\033[1;31m  A  .bashrc  ! shell startup file\033[m\n") != std::string::npos);
}

TEST_CASE("review prompt: picks toggle numbers and ranges, all and none") {
    std::vector<Change> v;
    for (const char* p : {"a", "b", "c", "d", "e"}) v.push_back(ch(p, Kind::Added, Type::File));
    std::vector<char> sel(5, 1);
    std::string err;
    CHECK(review::apply_picks("2 4-5", v, sel, &err));
    CHECK(sel == std::vector<char>{1, 0, 1, 0, 0});
    CHECK(review::apply_picks("none 3", v, sel, &err));
    CHECK(sel == std::vector<char>{0, 0, 1, 0, 0});
    CHECK(review::apply_picks("all,1", v, sel, &err));
    CHECK(sel == std::vector<char>{0, 1, 1, 1, 1});
    CHECK_FALSE(review::apply_picks("1 9", v, sel, &err));
    CHECK(err.find("'9'") != std::string::npos);
    CHECK(sel == std::vector<char>{0, 1, 1, 1, 1});  // unchanged on error
    CHECK_FALSE(review::apply_picks("3-2", v, sel, &err));
    CHECK_FALSE(review::apply_picks("x", v, sel, &err));
    CHECK(err.find("matches no change") != std::string::npos);
    CHECK_FALSE(review::apply_picks("0", v, sel, &err));
    CHECK(review::apply_picks("-2-3", v, sel, &err));
    CHECK(sel == std::vector<char>{0, 0, 0, 1, 1});
}

TEST_CASE("review prompt: picks take paths, directories and globs; -X leaves out, +X adds") {
    std::vector<Change> v{ch("README", Kind::Modified, Type::File),      ch("src", Kind::Added, Type::Dir),
                          ch("src/a.py", Kind::Added, Type::File),       ch("src/tests", Kind::Added, Type::Dir),
                          ch("src/tests/t.py", Kind::Added, Type::File), ch("tests/x.py", Kind::Added, Type::File)};
    std::vector<char> sel(v.size(), 1);
    std::string err;
    // A bare path first picks just what it names; "-tests/*" is anchored, so src/tests stays.
    CHECK(review::apply_picks("src/ -tests/*", v, sel, &err));
    CHECK(sel == std::vector<char>{0, 1, 1, 1, 1, 0});
    CHECK(review::apply_picks("-src/tests", v, sel, &err));
    CHECK(sel == std::vector<char>{0, 1, 1, 0, 0, 0});
    CHECK(review::apply_picks("+README", v, sel, &err));
    CHECK(sel == std::vector<char>{1, 1, 1, 0, 0, 0});
    CHECK(review::apply_picks("*.py", v, sel, &err));  // a glob without '/' matches names anywhere
    CHECK(sel == std::vector<char>{0, 0, 1, 0, 1, 1});
    CHECK_FALSE(review::apply_picks("-nothing/here", v, sel, &err));
    CHECK(sel == std::vector<char>{0, 0, 1, 0, 1, 1});
    CHECK(review::picked_line(sel) == "3 of 6 changes picked");
    std::vector<char> big(1725, 0);
    big[0] = 1;
    CHECK(review::picked_line(big) == "1 of 1,725 changes picked");
}

TEST_CASE("review prompt: the pick as apply's scope names each picked path alone, and leaves out the rest") {
    std::vector<Change> v{ch("*", Kind::Added, Type::File),
                          ch("nd", Kind::Added, Type::Dir),
                          ch("nd/a", Kind::Added, Type::File),
                          ch("nd/b", Kind::Added, Type::File),
                          ch("nd/s", Kind::Added, Type::Dir),
                          ch("nd/s/x", Kind::Added, Type::File),
                          ch("notes[1].txt", Kind::Added, Type::File),
                          ch("top", Kind::Added, Type::File)};
    CHECK(review::pick_scope(v, std::vector<char>(v.size(), 1)).only.empty());  // all: no scope
    // Names holding * ? [ escaped (no glob: attack39); nd/b and top not picked, nd/b beneath a picked dir
    // excluded; nd/s not picked but nd/s/x is: needed, not excluded.
    auto s = review::pick_scope(v, {1, 1, 1, 0, 0, 1, 1, 0});
    CHECK(s.only == std::vector<std::string>{"/\\*", "nd", "nd/a", "nd/s/x", "/notes\\[1].txt"});
    CHECK(s.exclude == std::vector<std::string>{"/nd/b"});
}

TEST_CASE("review prompt: the pick list shows the selection") {
    std::vector<Change> v{ch("a", Kind::Added, Type::File), ch("d", Kind::Added, Type::Dir)};
    CHECK(review::pick_list(v, {1, 0}) == "  [x] 1  A  a\n  [ ] 2  A  d/\n");
    // Ten or more: the numbers right-aligned, so the letters and paths line up (newuser13).
    std::vector<Change> ten(10, ch("f", Kind::Added, Type::File));
    std::string list = review::pick_list(ten, std::vector<char>(10, 1));
    CHECK(list.substr(0, list.find('\n')) == "  [x]  1  A  f");
    CHECK(list.substr(list.rfind('\n', list.size() - 2) + 1) == "  [x] 10  A  f\n");
}

TEST_CASE("review prompt: answers are trimmed and lowercased") {
    CHECK(review::normalize_answer("  A \r") == "a");
    CHECK(review::normalize_answer("") == "");
    CHECK(review::normalize_answer(" \t") == "");
    CHECK(std::string(review::kMenu).find("[k] keep session (default)") != std::string::npos);
    std::string menu = review::kMenu;  // every line fits an 80-column terminal
    for (size_t a = 0, b; (b = menu.find('\n', a)) != std::string::npos; a = b + 1) CHECK(b - a <= 79);
}

TEST_CASE("review prompt: a menu answer may be the word its letter stands for; ? explains them") {
    CHECK(review::menu_choice("diff") == "r");
    CHECK(review::menu_choice("review") == "r");
    CHECK(review::menu_choice("apply") == "a");
    CHECK(review::menu_choice("discard") == "d");
    CHECK(review::menu_choice("") == "k");  // Enter keeps
    CHECK(review::menu_choice("help") == "?");
    CHECK(review::menu_choice("?") == "?");
    CHECK(review::menu_choice("d") == "d");
    CHECK(review::menu_choice("dif") == "dif");  // no guessing: refused as unknown
    // [p]'s hunks are what [a] applies; [s] and [r] take the picked files whole (it said all three used them).
    CHECK(std::string(review::kMenuHelp).find("('hunks': the hunks a applies)") != std::string::npos);
    for (const char* text : {review::kMenuHelp, review::kPickHelp}) {  // each line fits 80 columns
        std::string t = text;
        for (size_t a = 0, b; (b = t.find('\n', a)) != std::string::npos; a = b + 1) CHECK(b - a <= 79);
    }
}
