// --min-free (helper/sandbox/limits/disk_floor.h): parsing, the default floor, the
// messages, and the start check on a real filesystem.
#include <catch2/catch.hpp>

#include "helper/sandbox/limits/disk_floor.h"
#include "helper/sandbox/limits/limit_watch.h"
#include "helper/sandbox/policy/run_args.h"

namespace {
constexpr uint64_t M = 1ull << 20, G = 1ull << 30;
}

TEST_CASE("min-free: values as --tmp-size takes them, a percentage of the filesystem, none") {
    disk_floor::Spec s;
    CHECK(disk_floor::parse("2G", &s));
    CHECK((s.kind == disk_floor::Spec::Bytes && s.value == 2 * G));
    CHECK(disk_floor::parse("1M", &s));
    CHECK(disk_floor::parse("5%", &s));
    CHECK((s.kind == disk_floor::Spec::Percent && s.value == 5));
    CHECK(disk_floor::parse("none", &s));
    CHECK(s.kind == disk_floor::Spec::None);
    CHECK(disk_floor::parse("0", &s));
    CHECK(s.kind == disk_floor::Spec::None);
    for (const char* bad : {"", "1k", "1023k", "60%", "0%", "1.5G", "-1G", "lots", "5%%", "G"})
        CHECK_FALSE(disk_floor::parse(bad, &s));
}

TEST_CASE("min-free: the default floor is 5% of the filesystem, 256M to 1G, at most a quarter of it") {
    CHECK(disk_floor::default_floor(250 * G) == 1 * G);    // a laptop disk: the cap
    CHECK(disk_floor::default_floor(10 * G) == 512 * M);   // 5%
    CHECK(disk_floor::default_floor(2 * G) == 256 * M);    // 5% is 102M: the minimum
    CHECK(disk_floor::default_floor(512 * M) == 128 * M);  // a tiny one: a quarter of it
    CHECK(disk_floor::resolve({}, 10 * G) == 512 * M);     // not given: the default
    CHECK(disk_floor::resolve({disk_floor::Spec::Percent, 10}, 100 * G) == 10 * G);
    CHECK(disk_floor::resolve({disk_floor::Spec::Bytes, 3 * G}, 40 * G) == 3 * G);
    CHECK(disk_floor::resolve({disk_floor::Spec::None, 0}, 40 * G) == 0);
    auto d = parse_run_args({"cmd"});
    REQUIRE(d.ok());
    CHECK(d->min_free_spec.kind == disk_floor::Spec::Default);  // on without a flag
    auto r = parse_run_args({"--min-free=none", "cmd"});
    REQUIRE(r.ok());
    CHECK(r->min_free_spec.kind == disk_floor::Spec::None);
    CHECK(parse_run_args({"--min-free", "1k"}).error().message ==
          "bad --min-free '1k'; use e.g. 1G or 2% (at least 1M, at most 50%), or none");
}

TEST_CASE("min-free: the stop and the refusal name the filesystem, the free space, the floor and the fix") {
    disk_floor::Floor f{4 * G, "--min-free 4G", "/var/tmp/layover-1000", 0, ""};
    CHECK(disk_floor::stopped(f, 4 * G) == "");
    CHECK(disk_floor::stopped(f, 5 * G) == "");
    CHECK(disk_floor::stopped(f, 3 * G) ==
          "--min-free 4G reached (3G free on the filesystem of /var/tmp/layover-1000, the state dir): sandbox "
          "stopped; free space there and resume the session, or lower the floor with --min-free (e.g. 1G, or none)");
    CHECK(disk_floor::stopped({0, "", "/x", 0, ""}, 0) == "");  // no floor
    CHECK(disk_floor::refusal(f, 1 * G) ==
          "only 1G free on the filesystem of /var/tmp/layover-1000 (the state dir, which holds the sessions), "
          "below --min-free 4G; free space there ('layover discard NAME --now' deletes a session at once, one in "
          "the trash too; 'layover gc --trash' empties the trash), or pass a smaller "
          "--min-free (e.g. 1G) or --min-free none");
}

TEST_CASE("min-free: the start check on this filesystem") {
    disk_floor::Space sp;
    REQUIRE(disk_floor::look("/", &sp));
    REQUIRE(sp.size > 0);
    auto def = disk_floor::at_start({}, "/");
    if (sp.avail >= disk_floor::default_floor(sp.size)) {
        REQUIRE(def.ok());
        CHECK(def->bytes == disk_floor::default_floor(sp.size));
        CHECK(def->words.find("(the default: 5% of the filesystem, 256M-1G)") != std::string::npos);
    }
    auto none = disk_floor::at_start({disk_floor::Spec::None, 0}, "/");
    REQUIRE(none.ok());
    CHECK(none->bytes == 0);
    auto high = disk_floor::at_start({disk_floor::Spec::Bytes, sp.avail + G}, "/");
    REQUIRE_FALSE(high.ok());
    CHECK(high.error().message.rfind("only ", 0) == 0);
    auto pct = disk_floor::at_start({disk_floor::Spec::Percent, 1}, "/");
    if (pct) CHECK(pct->words.rfind("--min-free 1% (", 0) == 0);
}

TEST_CASE("min-free: the inode floor is 5% of the inodes, 10000 to 1000000, at most a quarter, none without a count") {
    CHECK(disk_floor::default_inode_floor(16000000) == 800000);                       // a 250G ext4: 5%
    CHECK(disk_floor::default_inode_floor(100000000) == disk_floor::kMaxInodeFloor);  // the cap
    CHECK(disk_floor::default_inode_floor(100000) == disk_floor::kMinInodeFloor);     // 5% is 5000: the minimum
    CHECK(disk_floor::default_inode_floor(16384) == 4096);                            // a tiny one: a quarter of it
    CHECK(disk_floor::default_inode_floor(3) == 0);
    CHECK(disk_floor::default_inode_floor(0) == 0);  // btrfs, some FUSE: f_files 0, no floor
}

TEST_CASE("min-free: the inode stop and refusal name the filesystem, the free inodes, the floor and the fix") {
    disk_floor::Floor f{0, "", "/var/tmp/layover-1000", 10000, "the inode floor 10000 (the default: ...)"};
    CHECK(disk_floor::stopped_inodes(f, 10000) == "");
    CHECK(disk_floor::stopped_inodes(f, 20000) == "");
    CHECK(disk_floor::stopped_inodes(f, 9999) ==
          "the inode floor 10000 (the default: ...) reached (9999 inodes free on the filesystem of "
          "/var/tmp/layover-1000, the state dir): sandbox stopped; remove files there and resume the session, or "
          "turn the floors off with --min-free none");
    CHECK(disk_floor::stopped_inodes({4 * G, "--min-free 4G", "/x", 0, ""}, 0) == "");  // no inode floor
    CHECK(disk_floor::inode_refusal(f, 12) ==
          "only 12 inodes free on the filesystem of /var/tmp/layover-1000 (the state dir, which holds the "
          "sessions), below the inode floor 10000 (the default: ...); remove files there ('layover discard NAME --now' "
          "deletes a session at once, one in the trash too; 'layover gc --trash' empties the trash), or pass "
          "--min-free none");
}

TEST_CASE("min-free: the room above both floors decides when the supervisor looks again") {
    disk_floor::Floor both{1 * G, "", "/x", 10000, ""};
    // Bytes nearer their floor than inodes theirs: the bytes' room.
    CHECK(disk_floor::room(both, {0, 1 * G + 5 * M, 0, 1000000}) == 5 * M);
    // Inodes nearer: their room, an inode as kBytesPerInode.
    CHECK(disk_floor::room(both, {0, 100 * G, 0, 10100}) == 100 * disk_floor::kBytesPerInode);
    CHECK(disk_floor::room(both, {0, 100 * G, 0, 9000}) == 0);  // below: no room
    CHECK(disk_floor::room({0, "", "/x", 10000, ""}, {0, 0, 0, UINT64_MAX}) ==
          UINT64_MAX / disk_floor::kBytesPerInode * disk_floor::kBytesPerInode);   // no overflow
    CHECK(disk_floor::room({1 * G, "", "/x", 0, ""}, {0, 3 * G, 0, 0}) == 2 * G);  // no inode floor
    CHECK(disk_floor::room({}, {}) == UINT64_MAX);                                 // no floor at all
}

TEST_CASE("min-free: none turns the inode floor off too; a byte floor keeps it") {
    disk_floor::Space sp;
    REQUIRE(disk_floor::look("/", &sp));
    auto none = disk_floor::at_start({disk_floor::Spec::None, 0}, "/");
    REQUIRE(none.ok());
    CHECK(none->inodes == 0);
    auto low = disk_floor::at_start({disk_floor::Spec::Bytes, 1 * M}, "/");
    if (sp.favail >= disk_floor::default_inode_floor(sp.files)) {
        REQUIRE(low.ok());
        CHECK(low->inodes == disk_floor::default_inode_floor(sp.files));
        if (low->inodes) CHECK(low->inode_words.rfind("the inode floor ", 0) == 0);
    }
}

TEST_CASE("min-free: a creator of 400000 empty files a second is seen at the inode floor before the inodes run out") {
    // attack38: two threads of mknod made 316,000 empty files a second on a
    // tmpfs of a 2-core VM; the looks assumed 100,000 (kBytesPerInode), so
    // a 250 ms interval far from the floor let four times that eat more than
    // the room and the floor too (a 1M-inode filesystem's 50,000). The
    // supervisor's own arithmetic (room, next_size_interval), from all free
    // to the first look below the floor: never at 0 before it.
    constexpr uint64_t kRate = 400000;  // files a second
    for (uint64_t files : {200000ull, 1000000ull, 4000000ull, 30000000ull, 120000000ull}) {
        disk_floor::Floor f{0, "", "/x", disk_floor::default_inode_floor(files), ""};
        uint64_t favail = files;
        while (favail >= f.inodes) {
            int64_t ms = next_size_interval(0, 0, disk_floor::room(f, {0, 0, files, favail}));
            uint64_t made = kRate * static_cast<uint64_t>(ms) / 1000;
            INFO(files << " inodes, floor " << f.inodes << ", " << favail << " free, next look in " << ms << " ms");
            REQUIRE(made < favail);
            favail -= made;
        }
    }
}
