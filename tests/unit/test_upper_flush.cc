// The upper layer's flush while the command runs (helper/sandbox/upper_flush.h).
#include <catch2/catch.hpp>

#include "helper/sandbox/upper_flush.h"
#include "tests/unit/capture_tree.h"

TEST_CASE("upper flush: due once free space or inodes moved enough, either way") {
    FsFree since{uint64_t{10} << 30, 100000};
    CHECK_FALSE(flush_due(since, since));
    CHECK_FALSE(flush_due(since, {since.bytes - (kFlushMinBytes - 4096), since.inodes - (kFlushMinInodes - 1)}));
    CHECK(flush_due(since, {since.bytes - kFlushMinBytes, since.inodes}));
    CHECK(flush_due(since, {since.bytes + kFlushMinBytes, since.inodes}));  // deletions
    CHECK(flush_due(since, {since.bytes, since.inodes - kFlushMinInodes}));
    CHECK(flush_due(since, {since.bytes, since.inodes + kFlushMinInodes}));
    // No wrap-around when the counters cross zero or the other side.
    CHECK_FALSE(flush_due({0, 0}, {4096, 1}));
    CHECK(flush_due({0, 0}, {kFlushMinBytes, 0}));
}

TEST_CASE("upper flush: looks often while the filesystem moves, rarely when idle") {
    CHECK(next_flush_period(kFlushPeriodMs, true) == kFlushPeriodMs);
    CHECK(next_flush_period(kFlushIdleMs, true) == kFlushPeriodMs);
    int p = kFlushPeriodMs, looks = 0;
    while (p < kFlushIdleMs && looks < 100) {
        int next = next_flush_period(p, false);
        CHECK(next > p);
        p = next;
        ++looks;
    }
    CHECK(p == kFlushIdleMs);
    CHECK(looks <= 3);
    CHECK(next_flush_period(kFlushIdleMs, false) == kFlushIdleMs);
}

TEST_CASE("upper flush: the final syncfs runs when asked; a stopped flush has none") {
    testtree::TempDir t;
    UpperFlush none;
    CHECK_FALSE(none.wait());  // never started: the caller syncs itself
    CHECK_FALSE(none.start(t.path + "/missing"));
    CHECK_FALSE(none.wait());

    UpperFlush f;
    REQUIRE(f.start(t.path));
    testtree::write_text(t.path + "/a", "text\n");
    f.finish();
    f.finish();  // twice: one final syncfs
    CHECK(f.wait());
    CHECK(f.wait());
    CHECK(f.error() == 0);

    UpperFlush stopped;
    REQUIRE(stopped.start(t.path));
    stopped.stop();  // a failed set-up: no final syncfs
    CHECK_FALSE(stopped.wait());

    UpperFlush moved;
    REQUIRE(moved.start(t.path));
    UpperFlush into = std::move(moved);  // PreparedRun is moved around: the thread goes along
    CHECK(into.wait());
}
