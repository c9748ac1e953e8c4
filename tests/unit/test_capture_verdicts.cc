// The status walk's cheaper paths (issue 20): files only stat'ed when the
// verdict needs no more, and the verdict cache, keyed on both files' inode,
// size, mtime and ctime, which a later status reuses and any change misses.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <ctime>
#include <map>
#include <thread>
#include <vector>

#include "capture/scan/caches/verdicts.h"
#include "capture/scan/walk/scan.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using namespace capture;

namespace {

int64_t now_ns() {
    struct timespec t {};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

// Path -> kind of what a scan of the pair reports.
std::map<std::string, std::string> kinds(const ScanPair& p, const ScanOptions& o) {
    std::map<std::string, std::string> out;
    for (const auto& it : scan_dirs(p.up, p.low, o).items) out[it.change.path] = kind_name(it.change.kind);
    return out;
}

}  // namespace

TEST_CASE("capture verdicts: the summary walk over real files reports what the full walk does") {
    ScanPair p;
    testtree::make(p.low + "/touched.txt", "file:same\n");
    testtree::make(p.up + "/touched.txt", "file:same\n");
    testtree::make(p.low + "/edited.txt", "file:abcd\n");
    testtree::make(p.up + "/edited.txt", "file:abXd\n");  // same size, other bytes
    testtree::make(p.low + "/grown.txt", "file:ab\n");
    testtree::make(p.up + "/grown.txt", "file:abc\n");
    testtree::make(p.low + "/tagged.txt", "file:t\n");
    testtree::make(p.up + "/tagged.txt", "file:t\n");
    testtree::set_xattr(p.up + "/tagged.txt", "user.note", "x");
    testtree::make(p.low + "/exec.sh", "file:e\n");
    testtree::make(p.up + "/exec.sh", "file:e\n");
    ::chmod((p.up + "/exec.sh").c_str(), 0755);
    ScanOptions full, quick;
    quick.summary_only = true;
    auto a = kinds(p, full), b = kinds(p, quick);
    CHECK(a == b);
    CHECK(b.count("touched.txt") == 0);
    CHECK(b["edited.txt"] == "modified");
    CHECK(b["grown.txt"] == "modified");
    CHECK(b["tagged.txt"] == "metadata");
    CHECK(b["exec.sh"] == "metadata");
}

TEST_CASE("capture verdicts: the scan records the real file's link count for status's hard-link note") {
    ScanPair p;
    testtree::make(p.low + "/a.txt", "file:one\n");
    REQUIRE(::link((p.low + "/a.txt").c_str(), (p.low + "/b.txt").c_str()) == 0);
    testtree::make(p.up + "/a.txt", "file:changed\n");
    ScanOptions quick;
    quick.summary_only = true;
    auto r = scan_dirs(p.up, p.low, quick);
    REQUIRE(r.items.size() == 1);
    CHECK(r.items[0].change.old_nlink == 2);
}

TEST_CASE("capture verdicts: the stored form round-trips, and a damaged one is an empty cache") {
    int64_t start = now_ns() + 100 * kRacyNs;  // every file counts as old
    VerdictCache c(start);
    PairKey k{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
    c.record("a/b\nc", k, Cached{true, false});
    CHECK(c.dirty());
    std::string data = c.serialize();
    VerdictCache d(start);
    d.parse(data);
    auto hit = d.find("a/b\nc", k);
    REQUIRE(hit);
    CHECK(hit->same_content);
    CHECK_FALSE(hit->same_xattrs);
    PairKey other = k;
    other.upper.ctime_ns++;
    CHECK_FALSE(d.find("a/b\nc", other));
    VerdictCache e(start);
    e.parse(data.substr(0, data.size() - 3));
    CHECK_FALSE(e.find("a/b\nc", k));
    // A change within the racy window of the scan's start is never stored.
    VerdictCache f(start);
    PairKey racy = k;
    racy.lower.ctime_ns = start - kRacyNs / 2;
    f.record("x", racy, Cached{true, true});
    CHECK_FALSE(f.dirty());
}

TEST_CASE("capture verdicts: a cached verdict is reused, and a change to either file misses it") {
    ScanPair p;
    testtree::make(p.low + "/f.txt", "file:same\n");
    testtree::make(p.up + "/f.txt", "file:same\n");
    ::chmod((p.low + "/f.txt").c_str(), 0644);
    ::chmod((p.up + "/f.txt").c_str(), 0644);
    ScanOptions quick;
    quick.summary_only = true;
    // The scan "starts" later than it does, so these fresh files are not racy.
    VerdictCache first(now_ns() + 10 * kRacyNs);
    quick.verdicts = &first;
    CHECK(kinds(p, quick).empty());
    std::string stored = first.serialize();
    // Forge the stored verdict: a hit now reports what the cache says,
    // proving the contents were not compared again.
    VerdictCache probe(now_ns() + 10 * kRacyNs);
    probe.parse(stored);
    struct statx su {
    }, sl{};
    REQUIRE(::statx(AT_FDCWD, (p.up + "/f.txt").c_str(), 0, STATX_BASIC_STATS, &su) == 0);
    REQUIRE(::statx(AT_FDCWD, (p.low + "/f.txt").c_str(), 0, STATX_BASIC_STATS, &sl) == 0);
    auto key_of = [](const struct statx& s) {
        return StatKey{(static_cast<uint64_t>(s.stx_dev_major) << 32) | s.stx_dev_minor, s.stx_ino, s.stx_size,
                       static_cast<int64_t>(s.stx_mtime.tv_sec) * 1000000000 + s.stx_mtime.tv_nsec,
                       static_cast<int64_t>(s.stx_ctime.tv_sec) * 1000000000 + s.stx_ctime.tv_nsec};
    };
    PairKey k{key_of(su), key_of(sl)};
    REQUIRE(probe.find("f.txt", k));
    VerdictCache forged(now_ns() + 10 * kRacyNs);
    forged.record("f.txt", k, Cached{false, true});
    VerdictCache second(now_ns() + 10 * kRacyNs);
    second.parse(forged.serialize());
    quick.verdicts = &second;
    CHECK(kinds(p, quick)["f.txt"] == "modified");
    CHECK_FALSE(second.dirty());  // used as stored: nothing to rewrite

    // The upper file rewritten with the same size, its mtime set back to the
    // old value (what a hostile program can do): the ctime still moved.
    struct timespec old_times[2] = {{su.stx_atime.tv_sec, su.stx_atime.tv_nsec},
                                    {su.stx_mtime.tv_sec, su.stx_mtime.tv_nsec}};
    ::usleep(20000);  // past the coarse timestamp tick
    testtree::write_text(p.up + "/f.txt", "same\n");
    REQUIRE(::utimensat(AT_FDCWD, (p.up + "/f.txt").c_str(), old_times, 0) == 0);
    VerdictCache third(now_ns() + 10 * kRacyNs);
    third.parse(forged.serialize());
    quick.verdicts = &third;
    CHECK(kinds(p, quick).empty());  // compared again: equal, as it is
    // A change on the real side misses it too.
    VerdictCache fourth(now_ns() + 10 * kRacyNs);
    fourth.parse(forged.serialize());
    ::chmod((p.low + "/f.txt").c_str(), 0600);
    ::chmod((p.low + "/f.txt").c_str(), 0644);
    quick.verdicts = &fourth;
    CHECK(kinds(p, quick).empty());
}

TEST_CASE("capture verdicts: a risk-free file is known only at the stats it was read at, and never when racy") {
    int64_t start = now_ns() + 100 * kRacyNs;
    PairKey k{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
    VerdictCache first(start);
    CHECK_FALSE(first.risk_free("a"));  // never noted
    first.record_risk_free("a");        // never noted: nothing to key it on
    CHECK_FALSE(first.dirty());
    first.note("a", k);
    CHECK_FALSE(first.risk_free("a"));  // noted, but nothing stored
    first.record_risk_free("a");
    CHECK(first.dirty());
    // A content verdict for another path keeps its own flags.
    first.record("b", k, Cached{true, true});
    std::string data = first.serialize();

    VerdictCache second(start);
    second.parse(data);
    CHECK_FALSE(second.risk_free("a"));  // this scan has not noted it yet
    CHECK(second.note("a", k));
    CHECK_FALSE(second.note("b", k));
    CHECK(second.risk_free("a"));
    CHECK_FALSE(second.risk_free("b"));  // b had a content verdict, never a risk verdict
    CHECK_FALSE(second.find("a", k));    // and a has no content verdict
    REQUIRE(second.find("b", k));
    CHECK_FALSE(second.dirty());  // both used as stored

    // Any part of either stat moved: read again.
    for (int part = 0; part < 4; part++) {
        PairKey moved = k;
        if (part == 0) moved.upper.ctime_ns++;
        if (part == 1) moved.upper.ino++;
        if (part == 2) moved.lower.ctime_ns++;
        if (part == 3) moved.lower.size++;
        VerdictCache third(start);
        third.parse(data);
        third.note("a", moved);
        CHECK_FALSE(third.risk_free("a"));
        CHECK(third.dirty());  // the stale entry is dropped
    }

    // Racy: a ctime within kRacyNs of the scan's start is never recorded.
    VerdictCache fourth(start);
    PairKey racy = k;
    racy.upper.ctime_ns = start - kRacyNs / 2;
    fourth.note("a", racy);
    fourth.record_risk_free("a");
    CHECK_FALSE(fourth.dirty());
    VerdictCache fifth(start);
    fifth.parse(fourth.serialize());
    fifth.note("a", racy);
    CHECK_FALSE(fifth.risk_free("a"));
}

TEST_CASE("capture verdicts: a cache written by the version before risk verdicts is an empty cache") {
    int64_t start = now_ns() + 100 * kRacyNs;
    PairKey k{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
    VerdictCache now(start);
    now.record("a", k, Cached{true, true});
    std::string data = now.serialize();
    size_t nl = data.find('\n');
    REQUIRE(nl != std::string::npos);
    // The same entry in version 1's form: its magic, flags 1|2.
    std::string v1 = "layover-verdicts 1\n" + data.substr(nl + 1);
    v1.back() = 3;
    VerdictCache check(start);
    check.parse(data);
    CHECK(check.find("a", k));
    VerdictCache c(start);
    c.parse(v1);
    c.note("a", k);
    CHECK_FALSE(c.find("a", k));
    CHECK_FALSE(c.risk_free("a"));
}

TEST_CASE("capture verdicts: a cache of version 2 (8-byte fields) is an empty cache, and version 3 is smaller") {
    int64_t start = now_ns() + 100 * kRacyNs;
    PairKey k{{66305, 1234567, 4026, 1795867340964549015, 1795867340964549015},
              {66305, 7654321, 4096, 1795867340000000000, 1795867340000000001}};
    // Version 2's form of one entry: path "a", the ten numbers as 8 bytes each, flags 1|2|4.
    std::string v2 = "layover-verdicts 2 risks 1\n";
    auto u64 = [&](uint64_t v) {
        for (int i = 0; i < 8; i++) v2.push_back(static_cast<char>(v >> (8 * i)));
    };
    u64(1);
    v2 += "a";
    for (const StatKey* s : {&k.upper, &k.lower}) {
        u64(s->dev);
        u64(s->ino);
        u64(s->size);
        u64(static_cast<uint64_t>(s->mtime_ns));
        u64(static_cast<uint64_t>(s->ctime_ns));
    }
    v2.push_back(7);
    VerdictCache old(start);
    old.parse(v2);
    old.note("a", k);
    CHECK_FALSE(old.find("a", k));
    CHECK_FALSE(old.peek("a").known);
    // This version's own file: read back, the ctime before and after the mtime kept.
    VerdictCache now(start);
    now.record("a", k, Cached{true, true});
    PairKey back_in_time = k;
    back_in_time.upper.ctime_ns = k.upper.mtime_ns - 3;
    back_in_time.lower.mtime_ns = INT64_MIN;
    back_in_time.lower.ctime_ns = 5;  // far from the mtime, and old (a newer one is racy: never stored)
    back_in_time.lower.dev = UINT64_MAX;
    now.record("b", back_in_time, Cached{false, true});
    std::string data = now.serialize();
    CHECK(data.rfind("layover-verdicts 3 risks 1\n", 0) == 0);
    VerdictCache back(start);
    back.parse(data);
    auto a = back.find("a", k), b = back.find("b", back_in_time);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->same_content);
    CHECK_FALSE(b->same_content);
    // The same entry "a" takes fewer bytes than version 2's.
    VerdictCache one(start);
    one.record("a", k, Cached{true, true});
    CHECK(one.serialize().size() - (sizeof "layover-verdicts 3 risks 1\n" - 1) < v2.size() - (v2.find('\n') + 1) - 40);
}

TEST_CASE("capture verdicts: the cache is written in walk order, whatever order and thread made it") {
    // The walk's order: a dir's entries right after it, before its next sibling.
    CHECK(VerdictCache::walk_less("a", "a/x"));
    CHECK(VerdictCache::walk_less("a/x", "a-b"));
    CHECK(VerdictCache::walk_less("a/zzzzzzzzzz", "a-b"));
    CHECK_FALSE(VerdictCache::walk_less("a-b", "a/x"));
    CHECK_FALSE(VerdictCache::walk_less("same/path/x", "same/path/x"));
    CHECK(VerdictCache::walk_less("long/common/prefix/a", "long/common/prefix/b"));
    int64_t start = now_ns() + 100 * kRacyNs;
    PairKey k{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
    std::vector<std::string> paths = {"d1/f2", "a-b", "d1", "a/x", "d0/deep/er/f", "d1/f1", "a", "d0/z"};
    VerdictCache made(start);
    // Two threads, each in walk order, as the walk's two threads are.
    std::thread other([&] {
        for (const char* p : {"a", "a/x", "a-b"}) made.record(p, k, Cached{true, true});
    });
    for (const char* p : {"d0/deep/er/f", "d0/z", "d1", "d1/f1", "d1/f2"}) made.note(p, k);
    other.join();
    for (const char* p : {"d0/deep/er/f", "d0/z", "d1", "d1/f1", "d1/f2"}) made.record_risk_free(p);
    std::string data = made.serialize();
    std::vector<std::string> missing;
    for (const auto& p : paths)
        if (data.find(p) == std::string::npos) missing.push_back(p);
    std::sort(paths.begin(), paths.end(),
              [](const std::string& a, const std::string& b) { return VerdictCache::walk_less(a, b); });
    std::vector<size_t> at;
    for (const auto& p : paths)
        at.push_back(data.find(std::string(1, static_cast<char>(p.size())) + p));  // a varint length, then the path
    CHECK(missing.empty());
    CHECK(std::is_sorted(at.begin(), at.end()));
    CHECK(at.front() != std::string::npos);
    // Read back, each is found, in any order of asking (the lookups start where the last one ended).
    VerdictCache back(start);
    back.parse(data);
    for (const char* p : {"d1/f2", "a", "d0/z", "a-b"}) {
        CHECK(back.note(p, k) == (std::string(p) != "a" && std::string(p) != "a-b"));
    }
    CHECK(back.find("a/x", k));
    CHECK_FALSE(back.find("a/y", k));
    CHECK_FALSE(back.peek("zz").known);
    CHECK(back.peek("d1/f1").known);
}

TEST_CASE("capture verdicts: a file in another order (an older version's) is read, the last entry of a path counting") {
    int64_t start = now_ns() + 100 * kRacyNs;
    PairKey k{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
    VerdictCache one(start), two(start), three(start);
    one.record("z", k, Cached{true, true});
    two.record("a", k, Cached{false, true});
    three.record("a", k, Cached{true, false});
    std::string a = one.serialize(), b = two.serialize(), c = three.serialize();
    size_t m = a.find('\n') + 1;
    // z, then a twice: the second a counts.
    VerdictCache back(start);
    back.parse(a + b.substr(m) + c.substr(m));
    auto z = back.find("z", k), x = back.find("a", k);
    REQUIRE(z);
    REQUIRE(x);
    CHECK(x->same_content);
    CHECK_FALSE(x->same_xattrs);
    // Written back in walk order, one entry each.
    std::string again = back.serialize();
    CHECK(again.size() == a.size() + (c.size() - m));
    CHECK(again.find("a") < again.find("z"));
}

TEST_CASE("capture verdicts: stored early, written again only when a risk verdict came after") {
    char tmpl[] = "/tmp/layover-verdicts-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    base::Fd dfd(::open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dfd.valid());
    int64_t start = now_ns() + 100 * kRacyNs;
    PairKey k{{1, 2, 3, 4, 5}, {6, 7, 8, 9, 10}};
    VerdictCache c(start);
    c.note("a", k);
    c.note("b", k);
    c.record("a", k, Cached{true, true});
    REQUIRE(c.store_early(dfd.get()));
    CHECK_FALSE(c.late_since_early());
    VerdictCache early(start);
    early.load(dfd.get());
    CHECK(early.find("a", k));
    c.record_risk_free("b");  // the risk marks' read, after the walk
    CHECK(c.late_since_early());
    REQUIRE(c.store(dfd.get()));
    VerdictCache later(start);
    later.load(dfd.get());
    CHECK(later.note("b", k));
    ::unlinkat(dfd.get(), "verdicts", 0);
    ::rmdir(tmpl);
}

TEST_CASE("capture verdicts: a cache's temp file left by a killed writer is removed by a later write (attack52)") {
    // A status killed between the temp file's creation and its rename left
    // it in the session dir for the session's life, each up to the cache's size.
    char tmpl[] = "/tmp/layover-verdicts-XXXXXX";
    REQUIRE(::mkdtemp(tmpl));
    base::Fd dfd(::open(tmpl, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(dfd.valid());
    for (const char* n : {".verdicts-111", ".verdicts-222", ".status-snapshot-333"}) {
        base::Fd f(::openat(dfd.get(), n, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        REQUIRE(f.valid());
    }
    struct timespec old[2] = {{0, UTIME_OMIT}, {::time(nullptr) - 7200, 0}};
    REQUIRE(::utimensat(dfd.get(), ".verdicts-111", old, 0) == 0);
    REQUIRE(::utimensat(dfd.get(), ".status-snapshot-333", old, 0) == 0);
    REQUIRE(write_session_cache(dfd.get(), "verdicts", "x", "writing"));
    CHECK(::faccessat(dfd.get(), ".verdicts-111", F_OK, 0) != 0);         // two hours old: left by a killed writer
    CHECK(::faccessat(dfd.get(), ".verdicts-222", F_OK, 0) == 0);         // new: perhaps another writer's, at work
    CHECK(::faccessat(dfd.get(), ".status-snapshot-333", F_OK, 0) == 0);  // another cache's: its own write sweeps it
    CHECK(::faccessat(dfd.get(), "verdicts", F_OK, 0) == 0);
    std::string rm = std::string("rm -rf ") + tmpl;
    CHECK(::system(rm.c_str()) == 0);
}
