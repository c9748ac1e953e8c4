// The status snapshot (issue 20, capture/scan/caches/snapshot.h): its stored form,
// the keys the walk records for it, and their check against the trees.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <ctime>
#include <string>

#include "capture/scan/caches/snapshot.h"
#include "capture/scan/walk/scan.h"
#include "capture/scan/walk/session_snapshot.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using namespace capture;

namespace {

StatusSnapshot sample() {
    StatusSnapshot s;
    s.gen = 7;
    s.inputs = "summary;-;-;|home:5:/home";
    s.ignored = 3;
    s.excluded_seen = {"secret/dir"};
    Change a;
    a.path = std::string("a\nb\0c", 5);
    a.kind = Kind::Modified;
    a.type = Type::File;
    a.size = 12;
    a.mode = 0644;
    a.old_type = Type::File;
    a.old_mode = 0600;
    a.mtime_ns = -5;
    a.xattrs = {{"user.x", std::string("\0v", 2)}};
    a.old_nlink = 2;
    a.layer = 3;
    a.content_read = Change::Read::Free;  // kept as risk-free
    a.stale = true;
    Change d;
    d.path = "gone";
    d.kind = Kind::Deleted;
    d.old_type = Type::Dir;
    d.ignored = true;
    d.captured = false;
    Change l;
    l.path = "ln";
    l.type = Type::Symlink;
    l.link_target = "../t";
    l.risk_free_cached = true;
    s.changes = {a, d, l};
    s.keys.real = {{"a\nb", false, {1, 2, 3, 4, 5}},
                   {"gone", true, {}},
                   {"edges", false, {UINT64_MAX, uint64_t{1} << 63, 127, INT64_MIN, -1}},
                   {"edges2", false, {0, 128, 16383, INT64_MAX, INT64_MIN}},
                   {"ctime before mtime", false, {1, 1, 1, 1000000000000000000, 999999999999999997}}};
    s.keys.dirs = {{"", false, {9, 8, 7, 6, 5}}};
    return s;
}

int64_t now_ns() {
    struct timespec t {};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return static_cast<int64_t>(t.tv_sec) * 1000000000 + t.tv_nsec;
}

}  // namespace

TEST_CASE("a status snapshot reads back as written", "[snapshot]") {
    StatusSnapshot s = sample();
    std::string data = serialize_snapshot(s, s.changes);
    StatusSnapshot got;
    REQUIRE(parse_snapshot(data, &got));
    CHECK(got.gen == 7);
    CHECK(got.inputs == s.inputs);
    CHECK(got.ignored == 3);
    CHECK(got.excluded_seen == s.excluded_seen);
    REQUIRE(got.changes.size() == 3);
    const Change& a = got.changes[0];
    CHECK(a.path == s.changes[0].path);
    CHECK(a.kind == Kind::Modified);
    CHECK(a.type == Type::File);
    CHECK(a.size == 12);
    CHECK(a.mode == 0644);
    CHECK(a.old_type == Type::File);
    CHECK(a.old_mode == 0600);
    CHECK(a.mtime_ns == -5);
    CHECK(a.xattrs == s.changes[0].xattrs);
    CHECK(a.old_nlink == 2);
    CHECK(a.layer == 3);
    CHECK(a.risk_free_cached);  // read free of risks: known so next time
    CHECK(a.content_read == Change::Read::NotRead);
    CHECK(a.stale);
    CHECK(got.changes[1].kind == Kind::Deleted);
    CHECK(got.changes[1].ignored);
    CHECK_FALSE(got.changes[1].captured);
    CHECK_FALSE(got.changes[1].risk_free_cached);
    CHECK(got.changes[2].link_target == "../t");
    CHECK(got.changes[2].risk_free_cached);
    CHECK(got.keys.real == s.keys.real);
    CHECK(got.keys.dirs == s.keys.dirs);
}

TEST_CASE("a torn, altered or foreign status snapshot parses as none", "[snapshot]") {
    StatusSnapshot s = sample();
    std::string data = serialize_snapshot(s, s.changes);
    StatusSnapshot got;
    for (size_t n = 0; n < data.size(); n += 7) CHECK_FALSE(parse_snapshot(data.substr(0, n), &got));
    CHECK_FALSE(parse_snapshot(data + "x", &got));  // trailing bytes
    std::string other = data;
    other[10] = 'X';  // the magic
    CHECK_FALSE(parse_snapshot(other, &got));
    // A kind out of range (the byte after the first change's path).
    std::string head = data.substr(0, data.find(std::string("a\nb\0c", 5)) + 5);
    std::string bad = data;
    bad[head.size()] = 9;
    CHECK_FALSE(parse_snapshot(bad, &got));
    // A count larger than the rest can hold is refused before anything is allocated.
    std::string huge = data;
    size_t gen_at = data.find('\n') + 1, inputs_end = gen_at + 1 + 1 + s.inputs.size();
    REQUIRE(huge[inputs_end + 1] == 1);                                       // the hidden paths' count, one byte
    huge.replace(inputs_end + 1, 1, "\xff\xff\xff\xff\xff\xff\xff\xff\x7f");  // 2^63 - 1
    CHECK_FALSE(parse_snapshot(huge, &got));
    CHECK(got.changes.empty());
    // A number longer than 64 bits, or not in its shortest form.
    std::string longer = data, padded = data;
    longer.replace(gen_at, 1, "\x87\x80\x80\x80\x80\x80\x80\x80\x80\x02");  // bit 64 set
    CHECK_FALSE(parse_snapshot(longer, &got));
    padded.replace(gen_at, 1, "\x87\x00");  // 7 with a trailing zero byte
    CHECK_FALSE(parse_snapshot(padded, &got));
}

TEST_CASE("a status snapshot of the first format (8-byte fields) parses as none", "[snapshot]") {
    // Version 1's magic and the start of its body: gen 7, inputs "x", 0 ignored, 0 hidden, 0 changes, 0 keys.
    std::string v1 = "layover-status-snapshot 1 risks 1\n";
    auto u64 = [&](uint64_t v) {
        for (int i = 0; i < 8; i++) v1.push_back(static_cast<char>(v >> (8 * i)));
    };
    u64(7);
    u64(1);
    v1 += "x";
    for (int i = 0; i < 5; i++) u64(0);
    StatusSnapshot got;
    got.gen = 99;
    CHECK_FALSE(parse_snapshot(v1, &got));
    CHECK(got.gen == 0);
    // The same bytes under this version's magic are not a snapshot either (the fields are varints now).
    std::string relabelled = v1;
    relabelled[24] = '2';
    REQUIRE(relabelled.substr(0, 34) == "layover-status-snapshot 2 risks 1\n");
    CHECK_FALSE(parse_snapshot(relabelled, &got));
    // And this version's own file is smaller than 8 bytes a number would make it.
    StatusSnapshot s = sample();
    std::string data = serialize_snapshot(s, s.changes);
    REQUIRE(parse_snapshot(data, &got));
    CHECK(data.size() < 34 + 8 * 40);
}

TEST_CASE("a snapshot with a key changed within the racy window is not kept", "[snapshot]") {
    int64_t now = now_ns();
    SnapshotKeys k;
    k.real = {{"a", false, {1, 2, 3, 4, now - 5'000'000'000}}, {"b", true, {}}};
    k.dirs = {{"", false, {1, 2, 3, 4, now - 3'000'000'000}}};
    CHECK_FALSE(snapshot_racy(k, now));
    k.dirs[0].key.ctime_ns = now - 1'000'000'000;  // a dir changed a second before the walk
    CHECK(snapshot_racy(k, now));
    k.dirs[0].key.ctime_ns = now - 3'000'000'000;
    k.real[0].key.ctime_ns = now + 1;  // during the walk
    CHECK(snapshot_racy(k, now));
}

TEST_CASE("the walk records the real side of each entry and the upper's dirs, and each change misses", "[snapshot]") {
    ScanPair p;
    testtree::make(p.up + "/d", "dir");
    testtree::make(p.low + "/d", "dir");
    testtree::make(p.up + "/d/mod.txt", "file:new text\n");
    testtree::make(p.low + "/d/mod.txt", "file:old\n");
    testtree::make(p.up + "/new", "dir");
    testtree::make(p.up + "/new/deep.txt", "file:x\n");
    ScanOptions o;
    o.summary_only = true;
    o.record_keys = true;
    o.threads = 1;
    ScanResult r = scan_dirs(p.up, p.low, o);
    REQUIRE(r.items.size() == 3);  // d/mod.txt, new, new/deep.txt
    auto real = [&](const std::string& path) {
        return std::find_if(r.keys.real.begin(), r.keys.real.end(), [&](const PathKey& k) { return k.path == path; });
    };
    REQUIRE(real("d") != r.keys.real.end());
    CHECK_FALSE(real("d")->absent);
    REQUIRE(real("d/mod.txt") != r.keys.real.end());
    REQUIRE(real("new") != r.keys.real.end());
    CHECK(real("new")->absent);
    CHECK(real("new/deep.txt") == r.keys.real.end());  // below an absent dir: nothing to look at
    std::vector<std::string> dirs;
    for (const auto& k : r.keys.dirs) dirs.push_back(k.path);
    CHECK(dirs == std::vector<std::string>{"d", "new"});
    base::Fd up(::open(p.up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    base::Fd low(::open(p.low.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (int threads : {1, 2}) CHECK(snapshot_keys_hold(r.keys, up.get(), low.get(), threads));
    SECTION("a real file rewritten with its size and mtime put back") {
        struct stat st;
        REQUIRE(::stat((p.low + "/d/mod.txt").c_str(), &st) == 0);
        testtree::write_text(p.low + "/d/mod.txt", "OLD\n");
        struct timespec times[2] = {st.st_atim, st.st_mtim};
        REQUIRE(::utimensat(AT_FDCWD, (p.low + "/d/mod.txt").c_str(), times, 0) == 0);
        CHECK_FALSE(snapshot_keys_hold(r.keys, up.get(), low.get(), 1));
    }
    SECTION("a real entry made where the session added one") {
        testtree::make(p.low + "/new", "dir");
        CHECK_FALSE(snapshot_keys_hold(r.keys, up.get(), low.get(), 1));
    }
    SECTION("an entry added in an upper dir") {
        testtree::make(p.up + "/new/hand.txt", "file:h\n");
        CHECK_FALSE(snapshot_keys_hold(r.keys, up.get(), low.get(), 1));
    }
    SECTION("a real dir replaced by a symlink to a dir with the same entries") {
        REQUIRE(::rename((p.low + "/d").c_str(), (p.t.path + "/elsewhere").c_str()) == 0);
        REQUIRE(::symlink((p.t.path + "/elsewhere").c_str(), (p.low + "/d").c_str()) == 0);
        CHECK_FALSE(snapshot_keys_hold(r.keys, up.get(), low.get(), 2));
    }
}

TEST_CASE("status snapshot: the inputs hold this boot's id, so no snapshot outlives a crash", "[snapshot]") {
    char buf[64] = {};
    int fd = ::open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    REQUIRE(fd >= 0);
    ssize_t n = ::read(fd, buf, sizeof buf);
    ::close(fd);
    REQUIRE(n > 30);
    session::Info s;
    s.meta.target = "/home/u";
    IgnoreOptions ignore;
    base::Fd dir(::open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    std::string in = status_inputs(s, true, ignore, dir.get());
    CHECK(in.find(std::string(buf, static_cast<size_t>(n))) != std::string::npos);
    CHECK(in == status_inputs(s, true, ignore, dir.get()));  // and nothing else that varies
    CHECK(in != status_inputs(s, false, ignore, dir.get()));
}
