// After an apply: the bases it saw fresh become the session's known contents
// (capture/patch/known_bases.h over helper/store/known_bases.h).
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "capture/patch/known_bases.h"
#include "capture/scan/stale.h"
#include "helper/store/known_bases.h"

using namespace capture;

namespace {

BaseEntry file(const std::string& path, const std::string& fp, bool stale = false) {
    BaseEntry b;
    b.path = path;
    b.type = Type::File;
    b.mode = 0644;
    b.size = 4;
    b.fingerprint = fp;
    b.stale = stale;
    return b;
}

const std::string kA(32, 'a'), kB(32, 'b'), kC(32, 'c');

}  // namespace

TEST_CASE("known bases: an apply keeps its fresh bases, merged with what the session knew") {
    char tmpl[] = "/tmp/known-bases-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    std::string dir = tmpl;
    REQUIRE(session::read_known_bases(dir)->empty());
    REQUIRE(session::add_known_bases(dir, "f", {kC}).ok());  // a partial apply's content

    Manifest m;
    m.base = {file("f", kA), file("stale", kB, true), file(std::string("we\nird\xff", 7), kB)};
    BaseEntry absent;
    absent.path = "gone";
    absent.absent = true;
    BaseEntry dir_entry = file("d", kA);
    dir_entry.type = Type::Dir;
    m.base.push_back(absent);
    m.base.push_back(dir_entry);
    REQUIRE(remember_bases(dir, m).ok());

    auto got = session::read_known_bases(dir);
    REQUIRE(got.ok());
    CHECK(got->size() == 2);  // f and the odd name: not the stale, absent or directory entries
    CHECK(got->at("f") == std::set<std::string>{kA + "/0644", kC});
    CHECK(got->at(std::string("we\nird\xff", 7)) == std::set<std::string>{kB + "/0644"});
    CHECK(got->count("stale") == 0);

    // A corrupt file is an error that names it (and the fix), not a guess.
    int fd = ::open((dir + "/known-bases.json").c_str(), O_WRONLY | O_TRUNC);
    REQUIRE(fd >= 0);
    REQUIRE(::write(fd, "{\"files\": 3", 11) == 11);
    ::close(fd);
    auto bad = session::read_known_bases(dir);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("known-bases.json is malformed; remove it") != std::string::npos);
    std::string cmd = "rm -rf '" + dir + "'";
    CHECK(::system(cmd.c_str()) == 0);
}

TEST_CASE("known bases: read once, when a stale copy first asks, and only then") {
    char tmpl[] = "/tmp/known-bases-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    std::string dir = tmpl;
    session::KnownBasesOnce once(dir);
    // Never asked: a file written after the holder was made is what it reads.
    REQUIRE(session::add_known_bases(dir, "f", {kA}).ok());
    int asked = 0;
    auto fp = [&] {
        asked++;
        return kA;
    };
    // A fresh copy (ctime not after the copy-up) asks for nothing.
    CHECK_FALSE(stale_copy("f", 10, 10, 0644, &once, fp));
    CHECK(asked == 0);
    CHECK(stale_copy("g", 11, 10, 0644, &once, fp));        // stale, and nothing known of g
    CHECK_FALSE(stale_copy("f", 11, 10, 0644, &once, fp));  // stale by ctime, but the content is known
    CHECK(asked == 1);
    REQUIRE(once.get());
    REQUIRE(session::add_known_bases(dir, "g", {kA}).ok());
    CHECK(once.get()->count("g") == 0);                 // read once
    CHECK(stale_copy("f", 11, 10, 0644, nullptr, fp));  // no holder: stale
    std::string rm = "rm -rf " + dir;
    CHECK(::system(rm.c_str()) == 0);
}
