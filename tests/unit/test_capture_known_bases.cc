// After an apply: the bases it saw fresh become the session's known contents
// (capture/patch/known_bases.h over helper/store/records/known_bases.h).
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "capture/patch/known_bases.h"
#include "capture/scan/entry/dir_print.h"
#include "capture/scan/entry/fingerprint.h"
#include "capture/scan/entry/stale.h"
#include "helper/base/fd.h"
#include "helper/base/text.h"
#include "helper/store/records/known_bases.h"

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
    // A fresh copy (ctime before the copy-up) asks for nothing.
    CHECK_FALSE(stale_copy("f", 9, 10, 0644, &once, fp));
    CHECK(asked == 0);
    CHECK(stale_copy("g", 11, 10, 0644, &once, fp));        // stale, and nothing known of g
    CHECK_FALSE(stale_copy("f", 11, 10, 0644, &once, fp));  // stale by ctime, but the content is known
    CHECK(asked == 1);
    // The same tick of the coarse clock: a change after the copy, unless the
    // content is known (the run's exit vouched for it).
    CHECK(stale_copy("g", 10, 10, 0644, &once, fp));
    CHECK_FALSE(stale_copy("f", 10, 10, 0644, &once, fp));
    CHECK(asked == 2);
    REQUIRE(once.get());
    REQUIRE(session::add_known_bases(dir, "g", {kA}).ok());
    CHECK(once.get()->count("g") == 0);                 // read once
    CHECK(stale_copy("f", 11, 10, 0644, nullptr, fp));  // no holder: stale
    std::string rm = "rm -rf " + dir;
    CHECK(::system(rm.c_str()) == 0);
}

TEST_CASE("known bases: a fork inherits the source's as evidence of a real file, never as a fresh base") {
    char a[] = "/tmp/known-src-XXXXXX", b[] = "/tmp/known-fork-XXXXXX", c[] = "/tmp/known-fork2-XXXXXX";
    REQUIRE(::mkdtemp(a));
    REQUIRE(::mkdtemp(b));
    REQUIRE(::mkdtemp(c));
    std::string weird("d/new\nline", 10);
    REQUIRE(session::add_known_bases(a, "f", {kA}).ok());
    REQUIRE(session::add_known_bases(a, weird, {kB}).ok());
    REQUIRE(session::inherit_known_bases(a, b).ok());
    REQUIRE(session::add_known_bases(b, "g", {kC}).ok());
    REQUIRE(session::inherit_known_bases(b, c).ok());  // a fork of the fork: both kinds
    session::KnownBasesOnce fork(b), fork2(c);
    REQUIRE(fork.get());
    CHECK(fork.get()->count("f") == 0);  // not a fresh base in the fork
    auto fp = [] { return kA; };
    CHECK(stale_copy("f", 11, 10, 0644, &fork, fp));  // so a stale copy stays stale
    REQUIRE(fork.gone_evidence("f"));
    CHECK(fork.gone_evidence("f")->count(kA) == 1);
    REQUIRE(fork.gone_evidence(weird));
    CHECK(fork.gone_evidence("g")->count(kC) == 1);  // its own
    CHECK_FALSE(fork.gone_evidence("h"));
    CHECK((fork2.gone_evidence("f") && fork2.gone_evidence("g") && fork2.gone_evidence(weird)));
    CHECK(std::string(base::to_hex(std::string("\x00\xff", 2))) == "00ff");
    std::string back;
    CHECK(base::from_hex("00ff", &back));
    CHECK(back == std::string("\x00\xff", 2));
    CHECK_FALSE(base::from_hex("0", &back));
    CHECK_FALSE(base::from_hex("0g", &back));
    std::string rm = std::string("rm -rf ") + a + " " + b + " " + c;
    CHECK(::system(rm.c_str()) == 0);
}

TEST_CASE("a dir's subtree fingerprint: the real one matches the recorded one; a change inside does not") {
    char tmpl[] = "/tmp/layover-dirprint-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    std::string d = tmpl;
    REQUIRE(::mkdir((d + "/sub").c_str(), 0750) == 0);
    {
        base::Fd f(::open((d + "/a.txt").c_str(), O_WRONLY | O_CREAT | O_EXCL, 0640));
        REQUIRE(::write(f.get(), "a\n", 2) == 2);
    }
    REQUIRE(::symlink("a.txt", (d + "/sub/ln").c_str()) == 0);
    struct stat st {};
    REQUIRE(::stat(d.c_str(), &st) == 0);
    std::vector<SubtreeEntry> rec = {{"sub/ln", Type::Symlink, 0777, 5, fingerprint_bytes("a.txt")},
                                     {"a.txt", Type::File, 0640, 2, fingerprint_bytes("a\n")},
                                     {"sub", Type::Dir, 0750, 4096, ""}};
    std::string recorded = subtree_fingerprint(st.st_mode & 07777, rec);
    base::Fd dir(::open(d.c_str(), O_RDONLY | O_DIRECTORY));
    CHECK(real_subtree_fingerprint(dir.get()) == recorded);
    CHECK(subtree_fingerprint(st.st_mode & 07777, {}) != recorded);
    REQUIRE(::chmod((d + "/a.txt").c_str(), 0600) == 0);
    CHECK(real_subtree_fingerprint(dir.get()) != recorded);
    REQUIRE(::chmod((d + "/a.txt").c_str(), 0640) == 0);
    CHECK(real_subtree_fingerprint(dir.get()) == recorded);
    REQUIRE(::mkdir((d + "/sub/new").c_str(), 0700) == 0);
    CHECK(real_subtree_fingerprint(dir.get()) != recorded);
    ::rmdir((d + "/sub/new").c_str());
    ::unlink((d + "/sub/ln").c_str());
    ::rmdir((d + "/sub").c_str());
    ::unlink((d + "/a.txt").c_str());
    ::rmdir(d.c_str());
}
