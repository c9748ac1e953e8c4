// The births of copies a rename replaced (helper/store/session/first_copies.h): the
// earliest per path, any byte in a name, and a damaged line skipped.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "helper/base/fd.h"
#include "helper/store/session/first_copies.h"
#include "helper/store/session/session.h"
#include "tests/unit/capture_tree.h"

TEST_CASE("first copies: the earliest birth per path, odd names whole, damaged lines skipped") {
    testtree::TempDir t;
    {
        session::Notes notes(t.path);
        notes.first_copy("a.txt", 300);
        notes.first_copy("a.txt", 200);  // earlier: wins
        notes.first_copy("a.txt", 400);
    }
    std::string odd("new\nline \x01 \xff", 13);
    session::Notes(t.path).first_copy(odd, 1795769207830021039);  // a second run's
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

TEST_CASE("first copies: the names renames and links made, from when noting began; full past 8 MiB") {
    testtree::TempDir t;
    session::FirstCopiesOnce none(t.path);
    CHECK(none.moves_since() == -1);  // never noted: nothing can be said
    CHECK_FALSE(none.moved_under("a"));
    session::Notes(t.path).first_copy("b.txt", 50);
    {
        session::Notes run(t.path);
        run.moves_begin(900);
        run.moved_to("nd2");
        run.moved_to(std::string("x\ny", 3));
    }
    session::Notes(t.path).moves_begin(800);  // the earliest run counts
    {
        base::Fd fd(::open((t.path + "/first-copies").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
        std::string bad = "moves -1\nmoves x\nto zz\nto \n";
        REQUIRE(base::write_all(fd.get(), bad.data(), bad.size()).ok());
    }
    session::FirstCopiesOnce once(t.path);
    CHECK(once.moves_since() == 800);
    CHECK(once.get("b.txt") == 50);  // births read as before
    CHECK(once.moved_under("nd2"));
    CHECK(once.moved_under("nd2/c.txt"));
    CHECK(once.moved_under("nd2/deep/c.txt"));
    CHECK(once.moved_under(std::string("x\ny", 3)));
    CHECK_FALSE(once.moved_under("nd"));
    CHECK_FALSE(once.moved_under("nd22/c.txt"));
    CHECK_FALSE(once.moved_under("a/nd2"));
    CHECK(session::read_first_copies(t.path).size() == 1);  // a "to" or "moves" line is no birth
    // Full: a name made since may be missing, so none is trusted.
    {
        base::Fd fd(::open((t.path + "/first-copies").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC));
        std::string pad((8 << 20) + 1, 'z');
        pad += "\n";
        REQUIRE(base::write_all(fd.get(), pad.data(), pad.size()).ok());
    }
    CHECK(session::Notes(t.path).moved_to("late"));  // not written: "full" instead, once
    CHECK(session::Notes(t.path).moved_to("later"));
    auto m = session::read_moves(t.path);
    CHECK(m.full);
    CHECK(m.since == 800);
    CHECK(m.made.count("nd2") == 1);
    CHECK(m.made.count("late") == 0);
    CHECK_FALSE(session::FirstCopiesOnce(t.path + "/none").full());
}

TEST_CASE("first copies: a session whose last run noted nothing (discarding) reads as full, moves since it began") {
    testtree::TempDir t;
    session::Notes(t.path).first_copy("b.txt", 50);  // an earlier kept run's
    session::Meta m;
    m.created_ns = 700;
    CHECK(session::unnoted_since(m) == -1);
    m.on_exit = "discard";
    CHECK(session::unnoted_since(m) == 700);
    session::FirstCopiesOnce noted(t.path, -1);
    CHECK_FALSE(noted.full());
    CHECK(noted.moves_since() == -1);
    session::FirstCopiesOnce unnoted(t.path, session::unnoted_since(m));
    CHECK(unnoted.full());
    CHECK(unnoted.moves_since() == 700);
    CHECK(unnoted.get("b.txt") == 50);
    // A resume or a fork writes it down before meta.json's on_exit changes.
    session::mark_unnoted(t.path, 700);
    session::FirstCopiesOnce after(t.path);
    CHECK(after.full());
    CHECK(after.moves_since() == 700);
    CHECK(after.get("b.txt") == 50);
    testtree::TempDir src, fork;
    REQUIRE(session::write_meta(src.path, m).ok());
    session::copy_first_copies(src.path, fork.path);  // no notes of its own: the mark alone
    CHECK(session::read_moves(fork.path).full);
    CHECK(session::read_moves(fork.path).since == 700);
}
