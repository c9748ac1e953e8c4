#include <catch2/catch.hpp>
#include <string>

#include "review/diff/format.h"
#include "review/diff/stat.h"

using namespace review;

namespace {

Side file(std::string data, uint32_t mode = kGitRegular) {
    Side s;
    s.exists = true;
    s.mode = mode;
    s.size = data.size();
    s.data = std::move(data);
    return s;
}

FileDiff fd(std::string path, Side o, Side n) { return FileDiff{std::move(path), std::move(o), std::move(n)}; }

}  // namespace

// The golden strings below are git 2.39's output for the same changes, with
// the "index" lines removed (layover emits none; git apply needs none).
TEST_CASE("review format: modified file with a space in its name, as git prints it") {
    FileStat st;
    auto out = render_file(fd("a b", file("x\n"), file("y\n")), {}, &st);
    CHECK(out ==
          "diff --git a/a b b/a b\n"
          "--- a/a b\t\n"
          "+++ b/a b\t\n"
          "@@ -1 +1 @@\n"
          "-x\n"
          "+y\n");
    CHECK(st.status == 'M');
    CHECK(st.added == 1);
    CHECK(st.deleted == 1);
}

TEST_CASE("review format: deleted, added-empty, and added symlink") {
    CHECK(render_file(fd("del", file("q\n"), {}), {}) ==
          "diff --git a/del b/del\n"
          "deleted file mode 100644\n"
          "--- a/del\n"
          "+++ /dev/null\n"
          "@@ -1 +0,0 @@\n"
          "-q\n");
    CHECK(render_file(fd("empty", {}, file("")), {}) ==
          "diff --git a/empty b/empty\n"
          "new file mode 100644\n");
    CHECK(render_file(fd("lnk", {}, file("target", kGitSymlink)), {}) ==
          "diff --git a/lnk b/lnk\n"
          "new file mode 120000\n"
          "--- /dev/null\n"
          "+++ b/lnk\n"
          "@@ -0,0 +1 @@\n"
          "+target\n"
          "\\ No newline at end of file\n");
}

TEST_CASE("review format: mode change and missing newline at end of file") {
    CHECK(render_file(fd("noeol", file("e"), file("e\nf", kGitExec)), {}) ==
          "diff --git a/noeol b/noeol\n"
          "old mode 100644\n"
          "new mode 100755\n"
          "--- a/noeol\n"
          "+++ b/noeol\n"
          "@@ -1 +1,2 @@\n"
          "-e\n"
          "\\ No newline at end of file\n"
          "+e\n"
          "+f\n"
          "\\ No newline at end of file\n");
    CHECK(render_file(fd("m", file("same\n"), file("same\n", kGitExec)), {}) ==
          "diff --git a/m b/m\n"
          "old mode 100644\n"
          "new mode 100755\n");
    CHECK(render_file(fd("u", file("same\n"), file("same\n")), {}).empty());
}

TEST_CASE("review format: odd names are quoted as core.quotePath does") {
    std::string name = "t\tab\001\xc3\xa9\x7f";
    CHECK(render_file(fd(name, {}, file("z\n")), {}) ==
          "diff --git \"a/t\\tab\\001\\303\\251\\177\" \"b/t\\tab\\001\\303\\251\\177\"\n"
          "new file mode 100644\n"
          "--- /dev/null\n"
          "+++ \"b/t\\tab\\001\\303\\251\\177\"\n"
          "@@ -0,0 +1 @@\n"
          "+z\n");
    CHECK(render_file(fd("x y\001", {}, file("w\n")), {}) ==
          "diff --git \"a/x y\\001\" \"b/x y\\001\"\n"
          "new file mode 100644\n"
          "--- /dev/null\n"
          "+++ \"b/x y\\001\"\t\n"
          "@@ -0,0 +1 @@\n"
          "+w\n");
    CHECK(git_quote("plain/name") == "plain/name");
    CHECK(git_quote("q\"\\\n") == "\"q\\\"\\\\\\n\"");
}

TEST_CASE("review format: a type change is a deletion then a creation") {
    FileStat st;
    CHECK(render_file(fd("lnk", file("target", kGitSymlink), file("now file\n")), {}, &st) ==
          "diff --git a/lnk b/lnk\n"
          "deleted file mode 120000\n"
          "--- a/lnk\n"
          "+++ /dev/null\n"
          "@@ -1 +0,0 @@\n"
          "-target\n"
          "\\ No newline at end of file\n"
          "diff --git a/lnk b/lnk\n"
          "new file mode 100644\n"
          "--- /dev/null\n"
          "+++ b/lnk\n"
          "@@ -0,0 +1 @@\n"
          "+now file\n");
    CHECK(st.status == 'T');
}

TEST_CASE("review format: binary content and unloaded files are reported, not dumped") {
    FileStat st;
    CHECK(render_file(fd("bin", file("x"), file(std::string("x\0y", 3))), {}, &st) ==
          "diff --git a/bin b/bin\n"
          "Binary files a/bin and b/bin differ\n");
    CHECK(st.binary);
    CHECK(st.old_size == 1);
    CHECK(st.new_size == 3);
    Side big = file("");
    big.loaded = false;
    big.size = 1 << 30;
    CHECK(render_file(fd("big", {}, big), {}) ==
          "diff --git a/big b/big\n"
          "new file mode 100644\n"
          "Binary files /dev/null and b/big differ\n");
}

TEST_CASE("review format: hunks keep 3 lines of context and merge close changes") {
    std::string a, b;
    for (int i = 1; i <= 20; i++) a += std::to_string(i) + "\n";
    b = a;
    b.replace(b.find("2\n"), 2, "two\n");         // line 2
    b.replace(b.find("\n9\n") + 1, 2, "nine\n");  // line 9: 6 unchanged lines apart -> same hunk
    b.replace(b.find("\n18\n") + 1, 3, "");       // line 18 deleted: separate hunk
    CHECK(render_file(fd("n", file(a), file(b)), {}) ==
          "diff --git a/n b/n\n"
          "--- a/n\n"
          "+++ b/n\n"
          "@@ -1,12 +1,12 @@\n"
          " 1\n-2\n+two\n 3\n 4\n 5\n 6\n 7\n 8\n-9\n+nine\n 10\n 11\n 12\n"
          "@@ -15,6 +15,5 @@\n"
          " 15\n 16\n 17\n-18\n 19\n 20\n");
}

TEST_CASE("review format: CRLF content is kept byte-exact unless escaped for a terminal") {
    auto f = fd("w", file("a\r\nb\r\n"), file("a\r\nc\r\n"));
    CHECK(render_file(f, {}) == "diff --git a/w b/w\n--- a/w\n+++ b/w\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n");
    Style tty;
    tty.escape = true;
    CHECK(render_file(f, tty) == "diff --git a/w b/w\n--- a/w\n+++ b/w\n@@ -1,2 +1,2 @@\n a^M\n-b^M\n+c^M\n");
}

TEST_CASE("review format: terminal escaping covers C0, DEL, C1 and invalid UTF-8") {
    CHECK(terminal_safe("\033[31mred\tx\x7f") == "^[[31mred\tx^?");
    CHECK(terminal_safe("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(terminal_safe("\xc2\x9b"
                        "2J") == "\\u009b2J");
    CHECK(terminal_safe("\xff\xc3") == "\\xff\\xc3");
    CHECK(terminal_safe("a\xe2\x80\xae"
                        "b\xe2\x81\xa7") == "a\\u202eb\\u2067");                         // bidi override, isolate
    CHECK(terminal_safe("id\xe2\x80\x8bx\xf3\xa0\x81\x81") == "id\\u200bx\\U000e0041");  // zero-width, tag
    // An emoji's presentation selector and joiner stay (warning sign + U+FE0F;
    // heart + U+FE0F + U+200D + fire); after a letter, or a second in a row, escaped.
    CHECK(terminal_safe("\xe2\x9a\xa0\xef\xb8\x8f!") == "\xe2\x9a\xa0\xef\xb8\x8f!");
    CHECK(terminal_safe("\xe2\x9d\xa4\xef\xb8\x8f\xe2\x80\x8d\xf0\x9f\x94\xa5") ==
          "\xe2\x9d\xa4\xef\xb8\x8f\xe2\x80\x8d\xf0\x9f\x94\xa5");
    CHECK(terminal_safe("a\xef\xb8\x8f") == "a\\ufe0f");
    CHECK(terminal_safe("a\xe2\x80\x8d") == "a\\u200d");
    CHECK(terminal_safe("\xe2\x9a\xa0\xef\xb8\x8f\xef\xb8\x8f") == "\xe2\x9a\xa0\xef\xb8\x8f\\ufe0f");
    CHECK(terminal_safe("\xe2\x9a\xa0\xe2\x80\x8d\xe2\x80\x8d") == "\xe2\x9a\xa0\xe2\x80\x8d\\u200d");
    CHECK(terminal_safe("\xe2\x9a\xa0\xe2\x80\x8b") == "\xe2\x9a\xa0\\u200b");  // zero-width space: never
}

TEST_CASE("review format: colors follow git's defaults") {
    Style c;
    c.color = true;
    CHECK(render_file(fd("c", file("x\n"), file("y\n")), c) ==
          "\033[1mdiff --git a/c b/c\033[m\n"
          "\033[1m--- a/c\033[m\n"
          "\033[1m+++ b/c\033[m\n"
          "\033[36m@@ -1 +1 @@\033[m\n"
          "\033[31m-x\033[m\n"
          "\033[32m+y\033[m\n");
}

TEST_CASE("review stat: --stat matches git's layout, scaling and truncation") {
    std::string longp = "very/long/directory/name/that/goes/on/and/on/forever/and/ever/file.txt";
    FileStat bin{"bin", 'A', true, 0, 0, 0, 3};
    FileStat shrt{"short", 'A', false, 7, 0, 0, 0};
    FileStat lng{longp, 'A', false, 100, 0, 0, 0};
    CHECK(render_stat({bin, shrt, lng}, 80, false) ==
          " bin                                                | Bin 0 -> 3 bytes\n"
          " short                                              |   7 ++\n"
          " .../that/goes/on/and/on/forever/and/ever/file.txt  | 100 +++++++++++++++++++++\n"
          " 3 files changed, 107 insertions(+)\n");
    FileStat s2{"short", 'M', false, 53, 4, 0, 0};
    FileStat l2{longp, 'M', false, 0, 97, 0, 0};
    CHECK(render_stat({s2, l2}, 80, false) ==
          " short                                              | 57 ++++++++++++-\n"
          " .../that/goes/on/and/on/forever/and/ever/file.txt  | 97 ----------------------\n"
          " 2 files changed, 53 insertions(+), 101 deletions(-)\n");
    FileStat b3{"bin", 'M', true, 0, 0, 3, 4};
    CHECK(render_stat({b3, s2}, 80, false) ==
          " bin   | Bin 3 -> 4 bytes\n"
          " short |  57 +++++++++++++++++++++++++++++++++++++++++++++++++++++----\n"
          " 2 files changed, 53 insertions(+), 4 deletions(-)\n");
    FileStat mode_only{"m", 'M', false, 0, 0, 0, 0};
    FileStat one{"o", 'M', false, 0, 1, 0, 0};
    CHECK(render_stat({mode_only, one}, 80, false) ==
          " m | 0\n"
          " o | 1 -\n"
          " 2 files changed, 1 deletion(-)\n");
}

TEST_CASE("review stat: names are shown as status shows them, lined up by the columns they take") {
    FileStat e{"caf\xc3\xa9.txt", 'A', false, 1, 0, 0, 0};   // é: one column
    FileStat w{"\xe6\x97\xa5.txt", 'A', false, 1, 0, 0, 0};  // 日: two
    FileStat bad{"caf\xe9", 'A', false, 1, 0, 0, 0};         // not UTF-8
    CHECK(render_stat({e, w, bad}, 80, false) ==
          " caf\xc3\xa9.txt  | 1 +\n"
          " \xe6\x97\xa5.txt    | 1 +\n"
          " \"caf\\xe9\" | 1 +\n"
          " 3 files changed, 3 insertions(+)\n");
    // A long name keeps its tail, cut between whole characters.
    std::string wide;
    for (int i = 0; i < 40; i++) wide += "\xe6\x97\xa5";
    FileStat l{"d/" + wide, 'A', false, 1, 0, 0, 0};
    std::string tail;
    for (int i = 0; i < 14; i++) tail += "\xe6\x97\xa5";  // 28 of the 29 columns left: one is padding
    CHECK(render_stat({l}, 40, false) == " ..." + tail + "  | 1 +\n 1 file changed, 1 insertion(+)\n");
}

TEST_CASE("review stat: --name-status letters and quoting") {
    std::vector<FileStat> v{{"a b", 'M'}, {"del", 'D'}, {"x y\001", 'A'}, {"lnk", 'T'}};
    CHECK(render_name_status(v) == "M\ta b\nD\tdel\nA\t\"x y\\001\"\nT\tlnk\n");
}

TEST_CASE("review format: a context line without a newline at end of file is marked") {
    CHECK(render_file(fd("c", file("a\nb"), file("x\na\nb")), {}) ==
          "diff --git a/c b/c\n--- a/c\n+++ b/c\n@@ -1,2 +1,3 @@\n+x\n a\n b\n\\ No newline at end of file\n");
}
