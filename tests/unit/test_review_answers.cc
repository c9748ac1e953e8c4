#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "review/prompt/answers.h"

TEST_CASE("apply -p answers: keys tell apart path, lines, which twin, and a change's metadata") {
    using review::hunk_key;
    std::string k = hunk_key("f.txt", " a\n-b\n+B\n", 0);
    CHECK(k.size() == 32);
    CHECK(k == hunk_key("f.txt", " a\n-b\n+B\n", 0));
    CHECK(k != hunk_key("g.txt", " a\n-b\n+B\n", 0));
    CHECK(k != hunk_key("f.txt", " a\n-b\n+C\n", 0));
    CHECK(k != hunk_key("f.txt", " a\n-b\n+B\n", 1));
    // Length-prefixed fields: moving a byte from path to body is another key.
    CHECK(hunk_key("ab", "c", 0) != hunk_key("a", "bc", 0));
    capture::Change c;
    c.path = "new.txt";
    c.kind = capture::Kind::Added;
    c.type = capture::Type::File;
    c.size = 4;
    c.mode = 0644;
    c.mtime_ns = 1;
    std::string ck = review::change_key(c, "f1");
    CHECK(ck == review::change_key(c, "f1"));
    for (int i = 0; i < 3; i++) {
        capture::Change d = c;
        if (i == 0) d.size = 5;
        if (i == 1) d.mtime_ns = 2;
        if (i == 2) d.mode = 0755;
        CHECK(review::change_key(d, "f1") != ck);
    }
    CHECK(review::change_key(c, "f2") != ck);  // other bytes of the same size and mtime (attack25)
}

TEST_CASE("apply -p answers: saved and loaded back byte for byte; a missing file holds none, a damaged one errs") {
    char tmpl[] = "/tmp/layover-answers-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    std::string dir = tmpl;
    std::string file = review::answers_file(dir, "patch\n/x/p.tar.zst", "/home/me/proj");
    CHECK(file.rfind(dir + "/apply-p/", 0) == 0);
    CHECK(file != review::answers_file(dir, "patch\n/x/p.tar.zst", "/home/me/other"));
    auto none = review::load_answers(file);
    REQUIRE(none.ok());
    CHECK(none->given.empty());
    review::Answers a;
    a.given["k1"] = "y";
    a.given["k2"] = std::string("e line\n\t\0+x\n", 12);
    a.owner = "/state/sessions/my\tsession";
    REQUIRE(review::save_answers(file, a).ok());
    struct stat st {};
    REQUIRE(::stat(file.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto back = review::load_answers(file);
    REQUIRE(back.ok());
    CHECK(back->given == a.given);
    CHECK(back->owner == a.owner);
    auto listed = review::list_kept_answers(dir);
    REQUIRE(listed.size() == 1);
    CHECK(listed[0].file == file);
    CHECK(listed[0].owner == a.owner);
    CHECK(listed[0].readable);
    CHECK(!listed[0].temporary);
    std::ofstream(file) << "layover-apply-p-answers 1\nk1\tzz\n";
    CHECK(!review::load_answers(file).ok());
    std::ofstream(file) << "something else\n";
    CHECK(!review::load_answers(file).ok());
    review::drop_answers(file);
    CHECK(::access(file.c_str(), F_OK) != 0);
    ::rmdir((dir + "/apply-p").c_str());
    ::rmdir(dir.c_str());
}
