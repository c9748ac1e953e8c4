// Big files in diff (issue 20): the trimmed window, diffed and rendered,
// gives exactly the text the whole files give.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "helper/base/fd.h"
#include "review/diff/format.h"
#include "review/diff/trim.h"

using namespace review;

namespace {

std::string lines(int from, int to, const std::string& tag = "line") {
    std::string s;
    for (int i = from; i < to; i++) s += tag + " " + std::to_string(i) + "\n";
    return s;
}

// The rendered diff of old -> new through a Trim fed in `chunk`-byte pieces
// (empty when the window is refused).
std::string through_trim(const std::string& old_text, const std::string& new_text, size_t chunk, uint64_t cap,
                         bool* refused = nullptr) {
    char tmpl[] = "/tmp/layover-trim.XXXXXX";
    base::Fd fd(::mkstemp(tmpl));
    ::unlink(tmpl);
    REQUIRE(fd.valid());
    REQUIRE(::write(fd.get(), old_text.data(), old_text.size()) == static_cast<ssize_t>(old_text.size()));
    Trim t(fd.get(), old_text.size(), new_text.size());
    for (size_t off = 0; off < new_text.size(); off += chunk)
        REQUIRE(t.feed(off, new_text.data() + off, std::min(chunk, new_text.size() - off)).ok());
    auto w = t.finish(3, cap);
    REQUIRE(w.ok());
    if (refused) *refused = !w->has_value();
    if (!w->has_value()) return "";
    const TrimWindow& win = w->value();
    FileDiff f;
    f.path = "f.txt";
    f.old_side = Side{true, kGitRegular, "", true, old_text.size(), true, win.first_line};
    f.new_side = Side{true, kGitRegular, "", true, new_text.size(), true, win.first_line};
    if (win.identical) return render_file(FileDiff{f.path, f.old_side, f.old_side}, Style{});
    f.old_side.data = old_text.substr(win.start, win.old_end - win.start);
    f.new_side.data = new_text.substr(win.start, win.new_end - win.start);
    return render_file(f, Style{});
}

std::string whole(const std::string& old_text, const std::string& new_text) {
    FileDiff f;
    f.path = "f.txt";
    f.old_side = Side{true, kGitRegular, old_text, true, old_text.size()};
    f.new_side = Side{true, kGitRegular, new_text, true, new_text.size()};
    return render_file(f, Style{});
}

}  // namespace

TEST_CASE("review diff trim: the window's diff is the whole files' diff") {
    std::string base = lines(0, 3000);
    struct Case {
        const char* name;
        std::string new_text;
    };
    std::string mid = base;
    mid.replace(mid.find("line 1500\n"), 10, "edited 1500\nand one more\n");
    std::string two = mid;
    two.replace(two.find("line 1600\n"), 10, "");
    Case cases[] = {
        {"an edit in the middle", mid},
        {"two edits near each other", two},
        {"lines added at the start", "new a\nnew b\n" + base},
        {"the last lines removed", lines(0, 2990)},
        {"lines added at the end, no final newline", base + "tail without newline"},
        {"the first line changed", "x" + base.substr(1)},
        {"a repeated line inserted into repeats", lines(0, 1000) + lines(1000, 1001) + lines(1000, 3000)},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        std::string want = whole(base, c.new_text);
        REQUIRE_FALSE(want.empty());
        for (size_t chunk : {size_t{7}, size_t{4096}, size_t{1} << 20}) {
            INFO("chunk " << chunk);
            CHECK(through_trim(base, c.new_text, chunk, 1 << 20) == want);
        }
    }
    // Identical contents: no diff at all.
    CHECK(through_trim(base, base, 1000, 1 << 20).empty());
}

TEST_CASE("review diff trim: a window wider than the cap is refused, and holds nothing") {
    std::string old_text = lines(0, 5000), new_text = lines(0, 5000, "other");
    bool refused = false;
    CHECK(through_trim(old_text, new_text, 4096, 16 << 10, &refused).empty());
    CHECK(refused);
    // One long line (no newline to cut at) is as wide as the file.
    std::string flat(200000, 'a'), flat2 = flat;
    flat2[100000] = 'b';
    CHECK(through_trim(flat, flat2, 4096, 16 << 10, &refused).empty());
    CHECK(refused);
    CHECK_FALSE(through_trim(flat, flat2, 4096, 1 << 20, &refused).empty());
    CHECK_FALSE(refused);
}
