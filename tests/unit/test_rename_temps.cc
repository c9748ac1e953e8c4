// The rename worker's temporary names and their sweep (helper/store/records/rename_temps.h).
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/fs/beneath.h"
#include "helper/base/text.h"
#include "helper/store/records/rename_temps.h"
#include "tests/unit/capture_tree.h"

namespace {

const std::string kKey = "000102030405060708090a0b0c0d0e0f";

bool exists(const std::string& path) {
    struct stat st;
    return ::lstat(path.c_str(), &st) == 0;
}

}  // namespace

TEST_CASE("rename temps: SipHash-2-4 gives the reference vectors") {
    std::string key;
    REQUIRE(base::from_hex(kKey, &key));
    std::string msg;
    CHECK(rename_temps::siphash(key, msg) == 0x726fdb47dd0e0e31ULL);
    for (int i = 0; i < 15; i++) msg += static_cast<char>(i);
    CHECK(rename_temps::siphash(key, msg) == 0xa129ca6149be45e5ULL);
    msg += static_cast<char>(15);  // a whole word, then the length-only one
    CHECK(rename_temps::siphash(key, msg) == 0x3f2acc7f57c29bdbULL);
}

TEST_CASE("rename temps: only the key's own names are the worker's") {
    std::string name = rename_temps::temp_name(kKey, 0x1234);
    CHECK(name.rfind(".layover-rename-1234-", 0) == 0);
    CHECK(name.size() == std::string(".layover-rename-1234-").size() + 16);
    CHECK(rename_temps::is_temp_name(kKey, name));
    CHECK(rename_temps::is_temp_name(kKey, rename_temps::temp_name(kKey, ~0ULL)));
    CHECK_FALSE(rename_temps::is_temp_name("f" + kKey.substr(1), name));  // another run's key
    std::string forged = name;
    forged.back() = forged.back() == '0' ? '1' : '0';
    CHECK_FALSE(rename_temps::is_temp_name(kKey, forged));
    CHECK_FALSE(rename_temps::is_temp_name(kKey, ".layover-rename-7"));
    CHECK_FALSE(rename_temps::is_temp_name(kKey, ".layover-rename-1234"));
    CHECK_FALSE(rename_temps::is_temp_name(kKey, name + "-1"));
    CHECK_FALSE(rename_temps::is_temp_name(kKey, ".layover-rename--" + name.substr(name.size() - 16)));
    CHECK_FALSE(rename_temps::is_temp_name("", name));
    CHECK_FALSE(rename_temps::is_temp_name("xyz", name));
}

TEST_CASE("rename temps: a sweep removes the worker's dirs, with what they hold, and nothing else") {
    testtree::TempDir t;
    std::string up = t.path + "/upper";
    std::string ours = rename_temps::temp_name(kKey, 9), deep = rename_temps::temp_name(kKey, 10);
    testtree::make(up, "dir");
    testtree::make(up + "/" + ours, "dir");
    testtree::make(up + "/" + ours + "/half.txt", "file:h");
    testtree::make(up + "/a", "dir");
    testtree::make(up + "/a/b", "dir");
    testtree::make(up + "/a/b/" + deep, "dir");
    testtree::make(up + "/.layover-rename-7", "dir");  // the agent's own
    testtree::make(up + "/.layover-rename-7/keep.txt", "file:k");
    testtree::make(up + "/a/" + rename_temps::temp_name("f" + kKey.substr(1), 9), "dir");  // another key's
    testtree::make(up + "/a/" + ours + "x", "file:f");                                     // not a dir
    testtree::make(up + "/link", "symlink:a");
    testtree::make(t.path + "/elsewhere", "dir");  // outside the layer, through a symlink: never
    testtree::make(t.path + "/elsewhere/" + ours, "dir");
    testtree::make(up + "/out", "symlink:../elsewhere");
    CHECK(rename_temps::sweep_layer(up, kKey));
    CHECK(exists(t.path + "/elsewhere/" + ours));
    CHECK_FALSE(exists(up + "/" + ours));
    CHECK_FALSE(exists(up + "/a/b/" + deep));
    CHECK(exists(up + "/a/b"));
    CHECK(testtree::read_text(up + "/.layover-rename-7/keep.txt") == "k");
    CHECK(exists(up + "/a/" + rename_temps::temp_name("f" + kKey.substr(1), 9)));
    CHECK(exists(up + "/a/" + ours + "x"));
    CHECK(rename_temps::sweep_layer(t.path + "/none", kKey));  // no layer: nothing to sweep
}

TEST_CASE("rename temps: a session's key is kept for the next run, and dropped once swept") {
    testtree::TempDir t;
    testtree::make(t.path + "/upper", "dir");
    auto key = rename_temps::key_for_run(t.path);
    REQUIRE(key);
    CHECK(key->size() == 32);
    auto again = rename_temps::key_for_run(t.path);
    REQUIRE(again);
    CHECK(again.value() == key.value());
    std::string left = t.path + "/upper/" + rename_temps::temp_name(key.value(), 3);
    testtree::make(t.path + "/outside", "dir");
    testtree::make(t.path + "/outside/0", "dir");
    testtree::make(t.path + "/outside/0/upper", "dir");
    std::string out = t.path + "/outside/0/upper/" + rename_temps::temp_name(key.value(), 4);
    testtree::make(left, "dir");
    testtree::make(out, "dir");
    rename_temps::sweep_session(t.path);
    CHECK_FALSE(exists(left));
    CHECK_FALSE(exists(out));
    CHECK_FALSE(exists(rename_temps::key_path(t.path)));
    rename_temps::sweep_session(t.path);  // no key: nothing to do
}

TEST_CASE("rename temps: a sweep reaches leftovers past PATH_MAX, one fd at a time") {
    testtree::TempDir t;
    std::string up = t.path + "/upper";
    testtree::make(up, "dir");
    std::string name(200, 'd');
    std::string ours = rename_temps::temp_name(kKey, 11), mid = rename_temps::temp_name(kKey, 12);
    // 600 levels of 200 bytes (120 KB from the layer), made fd-relative; a
    // leftover halfway down and one at the bottom, with a file in each.
    base::Fd cur(::open(up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(cur.valid());
    for (int i = 0; i < 600; i++) {
        if (i == 300) {
            REQUIRE(::mkdirat(cur.get(), mid.c_str(), 0700) == 0);
            base::Fd m(::openat(cur.get(), mid.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
            base::Fd f(::openat(m.get(), "half.txt", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
            REQUIRE(f.valid());
        }
        REQUIRE(::mkdirat(cur.get(), name.c_str(), 0755) == 0);
        base::Fd next(::openat(cur.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        REQUIRE(next.valid());
        cur = std::move(next);
    }
    REQUIRE(::mkdirat(cur.get(), ours.c_str(), 0700) == 0);
    REQUIRE(::mkdirat(cur.get(), (ours + "/sub").c_str(), 0700) == 0);
    REQUIRE(::mkdirat(cur.get(), ".layover-rename-7", 0700) == 0);  // the agent's own
    // The walk holds a few fds whatever the depth: under a limit of 32.
    struct rlimit was;
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &was) == 0);
    struct rlimit low = was;
    low.rlim_cur = 32;
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    bool whole = rename_temps::sweep_layer(up, kKey);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &was) == 0);
    CHECK(whole);
    struct stat st;
    CHECK(::fstatat(cur.get(), ours.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0);
    CHECK(::fstatat(cur.get(), ".layover-rename-7", &st, AT_SYMLINK_NOFOLLOW) == 0);
    // Down again to the middle: its leftover gone too.
    base::Fd at(::open(up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (int i = 0; i < 300; i++) at = base::Fd(::openat(at.get(), name.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(at.valid());
    CHECK(::fstatat(at.get(), mid.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0);
    CHECK(::fstatat(at.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0);
    cur.reset();
    at.reset();
    // What TempDir's removal could not reach at that depth.
    base::Fd top(::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    CHECK(review::remove_tree_at(top.get(), "upper"));
}
