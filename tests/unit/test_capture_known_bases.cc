// Base records kept across an apply (capture/patch/known_bases.h): which
// stale entries they clear, and their file's round trip.
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "capture/patch/known_bases.h"

using namespace capture;

namespace {

BaseEntry file(const std::string& path, const std::string& fp, bool stale = false, uint32_t mode = 0644,
               uint64_t size = 4) {
    BaseEntry b;
    b.path = path;
    b.type = Type::File;
    b.mode = mode;
    b.size = size;
    b.fingerprint = fp;
    b.stale = stale;
    return b;
}

const std::string kA(32, 'a'), kB(32, 'b');

}  // namespace

TEST_CASE("known bases: a stale entry matching a fresh record is no longer stale") {
    std::vector<BaseEntry> base{file("f", kA, true), file("g", kA, true)};
    CHECK(clear_known_stale(&base, {file("f", kA)}) == 1);
    CHECK_FALSE(base[0].stale);
    CHECK(base[1].stale);  // no record: stays a conflict
}

TEST_CASE("known bases: any difference keeps the entry stale") {
    std::vector<BaseEntry> base{file("f", kA, true)};
    CHECK(clear_known_stale(&base, {file("f", kB)}) == 0);                  // other content
    CHECK(clear_known_stale(&base, {file("f", kA, false, 0755)}) == 0);     // other mode
    CHECK(clear_known_stale(&base, {file("f", kA, false, 0644, 5)}) == 0);  // other size
    BaseEntry link = file("f", kA);
    link.type = Type::Symlink;
    CHECK(clear_known_stale(&base, {link}) == 0);                 // other type
    CHECK(clear_known_stale(&base, {file("f", kA, true)}) == 0);  // a stale record proves nothing
    CHECK(base[0].stale);
}

TEST_CASE("known bases: kept in the session dir, merged, and read back") {
    char tmpl[] = "/tmp/known-bases-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    std::string dir = tmpl;
    auto none = known_bases(dir);
    REQUIRE(none.ok());
    CHECK(none->empty());

    Manifest m;
    m.format = "layover-patch/1";
    m.target = "/home/u";
    m.session = "s";
    m.base = {file("f", kA), file("stale", kA, true), file(std::string("we\nird\xff", 7), kB)};
    BaseEntry absent;
    absent.path = "gone";
    absent.absent = true;
    m.base.push_back(absent);
    REQUIRE(remember_bases(dir, m).ok());
    Manifest later = m;
    later.base = {file("f", kB), file("h", kA)};
    REQUIRE(remember_bases(dir, later).ok());

    auto got = known_bases(dir);
    REQUIRE(got.ok());
    REQUIRE(got->size() == 3);  // f (the later record), h, the odd name; not the stale or absent ones
    for (const auto& b : *got) {
        if (b.path == "f") CHECK(b.fingerprint == kB);
        CHECK(b.path != "stale");
        CHECK(b.path != "gone");
    }

    // A corrupt file is an error to read, and is replaced by the next record.
    int fd = ::open((dir + "/bases.json").c_str(), O_WRONLY | O_TRUNC);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "{\"format\": 3", 12) == 12);
    ::close(fd);
    CHECK_FALSE(known_bases(dir).ok());
    REQUIRE(remember_bases(dir, later).ok());
    got = known_bases(dir);
    REQUIRE(got.ok());
    CHECK(got->size() == 2);
    std::string cmd = "rm -rf '" + dir + "'";
    CHECK(::system(cmd.c_str()) == 0);
}
