// The upper layer's flush while the command runs (helper/sandbox/prepare/upper_flush.h).
#include <catch2/catch.hpp>

#include "helper/sandbox/prepare/upper_flush.h"
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

TEST_CASE("upper flush: /proc/stat's cpu line, and a quarter of a CPU idle") {
    CpuTicks t;
    REQUIRE(parse_cpu_ticks("cpu  100 5 50 800 40 0 5 0 0 0\ncpu0 50 2 25 400 20 0 2 0 0 0\n", &t));
    CHECK(t.idle == 840);
    CHECK(t.total == 1000);
    REQUIRE(parse_cpu_ticks("cpu 1 2 3 4\n", &t));  // an old kernel's four fields
    CHECK(t.idle == 4);
    CHECK(t.total == 10);
    CHECK_FALSE(parse_cpu_ticks("cpu0 1 2 3 4\n", &t));
    CHECK_FALSE(parse_cpu_ticks("cpu 1 2\n", &t));
    CHECK_FALSE(parse_cpu_ticks("", &t));

    CpuTicks before{1000, 5000};
    // 2 CPUs, 100 ticks of time: 200 ticks in all. One CPU busy (the command), the other idle: free.
    CHECK(cpu_free(before, {1100, 5200}, 2));
    // A quarter of a CPU idle: still free; less: every core busy, the flush would take the command's CPU.
    CHECK(cpu_free(before, {1025, 5200}, 2));
    CHECK_FALSE(cpu_free(before, {1024, 5200}, 2));
    CHECK_FALSE(cpu_free(before, {1000, 5200}, 2));
    // 8 CPUs, 800 ticks: 25 idle ticks are a quarter of a CPU.
    CHECK(cpu_free(before, {1025, 5800}, 8));
    CHECK_FALSE(cpu_free(before, {1020, 5800}, 8));
    // No tick since the last look, or counters gone backwards: no evidence, flush.
    CHECK(cpu_free(before, before, 2));
    CHECK(cpu_free(before, {900, 4000}, 2));
}
