#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "helper/base/fs/beneath.h"
#include "review/txn/durable.h"
#include "review/txn/fsops.h"

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/layover-durable-XXXXXX";
        path = ::mkdtemp(tmpl);
    }
    ~TempDir() {
        ::chmod((path + "/sub").c_str(), 0700);
        int fd = ::open("/tmp", O_RDONLY | O_DIRECTORY);
        (void)review::remove_tree_at(fd, path.substr(5));
        ::close(fd);
    }
};

int open_root(const TempDir& t) {
    int fd = ::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    return fd;
}

}  // namespace

TEST_CASE("review durable: kept fds stay syncable after the entry's mode drops to 0000") {
    TempDir t;
    base::Fd root(open_root(t));
    review::DirCache dirs(root.get());
    REQUIRE(::mkdir((t.path + "/sub").c_str(), 0700) == 0);
    int f = ::open((t.path + "/sub/f").c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    REQUIRE(f >= 0);
    REQUIRE(::write(f, "data", 4) == 4);
    review::start_writeback(f, 0, 4);
    review::Durability dur;
    dur.keep(f);
    REQUIRE(::fchmod(f, 0) == 0);
    REQUIRE(::close(f) == 0);
    int d = ::open((t.path + "/sub").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    REQUIRE(d >= 0);
    dur.keep(d);
    REQUIRE(::close(d) == 0);
    REQUIRE(::chmod((t.path + "/sub").c_str(), 0) == 0);
    dur.dir("");
    dur.node("link");  // a symlink: skipped, its directory covers it
    REQUIRE(::symlinkat("nowhere", root.get(), "link") == 0);
    CHECK_FALSE(dur.whole_fs());
    auto r = dur.flush(root.get(), dirs);
    CHECK(r.ok());
}

TEST_CASE("review durable: past kMaxEntries it syncs the whole filesystem once and forgets the entries") {
    TempDir t;
    base::Fd root(open_root(t));
    review::DirCache dirs(root.get());
    review::Durability dur;
    for (size_t i = 0; i <= review::Durability::kMaxEntries; i++) dur.dir("d" + std::to_string(i));
    CHECK(dur.whole_fs());  // none of these dirs exists: per-entry syncing would fail
    CHECK(dur.flush(root.get(), dirs).ok());
    CHECK_FALSE(dur.whole_fs());
    dur.dir("missing");
    CHECK_FALSE(dur.flush(root.get(), dirs).ok());  // a per-entry sync reports what it cannot sync
}

TEST_CASE("review dir cache: an fd stays valid while other directories fill the cache past its bound") {
    // make_link holds the source directory's fd while it gets the
    // destination's: a full cache must not close the first under it.
    TempDir t;
    base::Fd root(open_root(t));
    review::DirCache dirs(root.get());
    size_t n = review::DirCache::kMax * 3;
    for (size_t i = 0; i < n; i++) REQUIRE(::mkdir((t.path + "/d" + std::to_string(i)).c_str(), 0700) == 0);
    auto held = dirs.get("d0");
    REQUIRE(held.ok());
    struct stat want {};
    REQUIRE(::stat((t.path + "/d0").c_str(), &want) == 0);
    for (size_t i = 1; i < n; i++) {
        auto fd = dirs.get("d" + std::to_string(i));
        REQUIRE(fd.ok());
        // The held one is used again now and then, as a caller holding it would.
        if (i % (review::DirCache::kMax / 4) == 0) REQUIRE(dirs.get("d0").value() == held.value());
        auto now = dirs.get("d" + std::to_string(i));
        REQUIRE(now.value() == fd.value());  // the one just returned is still cached
    }
    struct stat got {};
    REQUIRE(::fstat(held.value(), &got) == 0);
    CHECK(got.st_ino == want.st_ino);
    CHECK(got.st_dev == want.st_dev);
}

TEST_CASE("review fsops: nanosecond times convert to timespecs and back, before 1970 too") {
    for (int64_t ns : {int64_t{0}, int64_t{1}, int64_t{-1}, int64_t{-500000000}, int64_t{-1500000000},
                       int64_t{1735732800123456789}, int64_t{-86400} * 1000000000 - 7}) {
        struct timespec ts = review::timespec_of(ns);
        INFO(ns);
        CHECK(ts.tv_nsec >= 0);
        CHECK(ts.tv_nsec < 1000000000);
        CHECK(review::ns_of(ts) == ns);
    }
    CHECK(review::timespec_of(-1).tv_sec == -1);
    CHECK(review::timespec_of(-1).tv_nsec == 999999999);
}
