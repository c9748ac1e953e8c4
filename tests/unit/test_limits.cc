// Resource limits: durations, sizes and the run options that carry them.
#include <catch2/catch.hpp>

#include "helper/sandbox/limits.h"
#include "helper/sandbox/run_args.h"

TEST_CASE("limits: durations") {
    uint64_t ms = 0;
    CHECK(limits::parse_duration("90s", &ms));
    CHECK(ms == 90000);
    CHECK(limits::parse_duration("5m", &ms));
    CHECK(ms == 300000);
    CHECK(limits::parse_duration("1.5h", &ms));
    CHECK(ms == 5400000);
    CHECK(limits::parse_duration("1d", &ms));
    CHECK(ms == 86400000);
    CHECK(limits::parse_duration("300", &ms));
    CHECK(ms == 300000);
    CHECK(limits::parse_duration("none", &ms));
    CHECK(ms == 0);
    for (const char* bad : {"", "soon", "-5s", "5x", "0.0001s", "400d", "nan", "inf", "5 m"}) {
        INFO(bad);
        CHECK_FALSE(limits::parse_duration(bad, &ms));
    }
    CHECK(limits::format_duration(2000) == "2s");
    CHECK(limits::format_duration(5400000) == "1h30m");
    CHECK(limits::format_duration(86400000) == "1d");
}

TEST_CASE("limits: sizes") {
    uint64_t b = 0;
    CHECK(limits::parse_bytes("5M", &b));
    CHECK(b == 5ull << 20);
    CHECK(limits::parse_bytes("2GiB", &b));
    CHECK(b == 2ull << 30);
    CHECK(limits::parse_bytes("1.5G", &b));
    CHECK(b == 3ull << 29);
    CHECK(limits::parse_bytes("4096", &b));
    CHECK(b == 4096);
    CHECK(limits::parse_bytes("none", &b));
    CHECK(b == 0);
    for (const char* bad : {"", "10%", "-1M", "lots", "5Q", "1e30"}) {
        INFO(bad);
        CHECK_FALSE(limits::parse_bytes(bad, &b));
    }
    CHECK(limits::format_bytes(5ull << 20) == "5M");
    CHECK(limits::format_bytes(1536) == "1.5K");
}

TEST_CASE("run: limit options, defaults and refusals") {
    auto d = parse_run_args({"cmd"});
    REQUIRE(d.ok());
    CHECK(d->limits.timeout_ms == 24ull * 3600 * 1000);  // a time limit is on by default
    CHECK(d->limits.max_pids == 4096);
    CHECK(d->limits.max_size == 0);
    auto r = parse_run_args({"--timeout", "none", "--max-pids=100", "--max-size", "1G", "--max-memory", "2G", "x"});
    REQUIRE(r.ok());
    CHECK(r->limits.timeout_ms == 0);
    CHECK(r->limits.max_pids == 100);
    CHECK(r->limits.max_size == 1ull << 30);
    CHECK(r->limits.max_memory == 2ull << 30);
    CHECK(parse_run_args({"--max-pids", "7"}).error().message.find("bad --max-pids '7'") == 0);
    CHECK(parse_run_args({"--max-size", "10k"}).error().message.find("at least 1M") != std::string::npos);
    CHECK(parse_run_args({"--max-memory", "1M"}).error().message.find("at least 16M") != std::string::npos);
    CHECK(parse_run_args({"--timeout", "soon"}).error().message.find("90s, 5m, 2h, 1d or none") != std::string::npos);
}
