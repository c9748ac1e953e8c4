// --min-free (helper/sandbox/disk_floor.h): parsing, the default floor, the
// messages, and the start check on a real filesystem.
#include <catch2/catch.hpp>

#include "helper/sandbox/disk_floor.h"
#include "helper/sandbox/run_args.h"

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
    disk_floor::Floor f{4 * G, "--min-free 4G", "/var/tmp/layover-1000"};
    CHECK(disk_floor::stopped(f, 4 * G) == "");
    CHECK(disk_floor::stopped(f, 5 * G) == "");
    CHECK(disk_floor::stopped(f, 3 * G) ==
          "--min-free 4G reached (3G free on the filesystem of /var/tmp/layover-1000, the state dir): sandbox "
          "stopped; free space there and resume the session, or lower the floor with --min-free (e.g. 1G, or none)");
    CHECK(disk_floor::stopped({0, "", "/x"}, 0) == "");  // no floor
    CHECK(disk_floor::refusal(f, 1 * G) ==
          "only 1G free on the filesystem of /var/tmp/layover-1000 (the state dir, which holds the sessions), "
          "below --min-free 4G; free space there ('layover gc', 'layover discard NAME'), or pass a smaller "
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
