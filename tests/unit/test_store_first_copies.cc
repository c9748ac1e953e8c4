// The births of copies a rename replaced (helper/store/first_copies.h): the
// earliest per path, any byte in a name, and a damaged line skipped.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "helper/base/fd.h"
#include "helper/store/first_copies.h"
#include "tests/unit/capture_tree.h"

TEST_CASE("first copies: the earliest birth per path, odd names whole, damaged lines skipped") {
    testtree::TempDir t;
    session::note_first_copy(t.path, "a.txt", 300);
    session::note_first_copy(t.path, "a.txt", 200);  // earlier: wins
    session::note_first_copy(t.path, "a.txt", 400);
    std::string odd("new\nline \x01 \xff", 13);
    session::note_first_copy(t.path, odd, 1795769207830021039);
    {
        base::Fd fd(::open((t.path + "/first-copies").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
        REQUIRE(fd.valid());
        std::string bad = "12 6\n-5 61\nx 61\n99999999999999999999 62\n9223372036854775808 63\n 64\n7 zz\n5 6464";
        REQUIRE(base::write_all(fd.get(), bad.data(), bad.size()).ok());  // the last line is cut short
    }
    auto got = session::read_first_copies(t.path);
    CHECK(got.size() == 2);
    CHECK(got["a.txt"] == 200);
    CHECK(got[odd] == 1795769207830021039);
    session::FirstCopiesOnce once(t.path);
    CHECK(once.get("a.txt") == 200);
    CHECK(once.get("dd") == -1);
    CHECK(session::read_first_copies(t.path + "/none").empty());
    testtree::TempDir fork;
    session::copy_first_copies(t.path, fork.path);
    CHECK(session::read_first_copies(fork.path) == got);
}
