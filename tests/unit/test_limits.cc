// Resource limits: durations, sizes and the run options that carry them.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <ctime>
#include <thread>

#include "helper/base/fd.h"
#include "helper/sandbox/limits/limit_watch.h"
#include "helper/sandbox/limits/limits.h"
#include "helper/sandbox/limits/memcg.h"
#include "helper/sandbox/policy/run_args.h"
#include "helper/store/records/usage.h"
#include "helper/store/session/session.h"
#include "tests/unit/capture_tree.h"

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

TEST_CASE("limits: the command gets no realtime priority, even from a caller allowed one (attack17)") {
    pid_t pid = ::fork();
    if (pid == 0) {
        struct rlimit rt = {50, 50}, nice = {30, 30};
        // Root with CAP_SYS_RESOURCE only: else the caller's own limits are tested.
        bool raised = ::setrlimit(RLIMIT_RTPRIO, &rt) == 0 && ::setrlimit(RLIMIT_NICE, &nice) == 0;
        if (!limits::apply_in_child(Limits{})) ::_exit(2);
        ::getrlimit(RLIMIT_RTPRIO, &rt);
        ::getrlimit(RLIMIT_NICE, &nice);
        bool zero = rt.rlim_cur == 0 && rt.rlim_max == 0 && nice.rlim_cur == 0 && nice.rlim_max == 0;
        ::_exit(zero ? (raised ? 0 : 3) : 1);
    }
    int st = 0;
    ::waitpid(pid, &st, 0);
    REQUIRE(WIFEXITED(st));
    if (WEXITSTATUS(st) == 3) WARN("not root: RLIMIT_RTPRIO could not be raised first; only the 0 kept is checked");
    CHECK((WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3));
}

TEST_CASE("limits: sizes") {
    // The grammar of --tmp-size (overlay::parse_size), without percentages.
    uint64_t b = 0;
    CHECK(limits::parse_bytes("5M", &b));
    CHECK(b == 5ull << 20);
    CHECK(limits::parse_bytes("2G", &b));
    CHECK(b == 2ull << 30);
    CHECK(limits::parse_bytes("512k", &b));
    CHECK(b == 512ull << 10);
    CHECK(limits::parse_bytes("4096", &b));
    CHECK(b == 4096);
    CHECK(limits::parse_bytes("none", &b));
    CHECK(b == 0);
    for (const char* bad : {"", "10%", "-1M", "lots", "5Q", "1e30", "1.5G", "2GiB", "0M", "99999999999999999999G"}) {
        INFO(bad);
        CHECK_FALSE(limits::parse_bytes(bad, &b));
    }
    CHECK(limits::format_bytes(5ull << 20) == "5M");
    CHECK(limits::format_bytes(1536) == "1.5K");
}

TEST_CASE("limits: the size watch looks more often near the cap, and less on a big layer") {
    const uint64_t G = 1ull << 30, M = 1ull << 20;
    CHECK(next_size_interval(0, 0, 100 * G) == kMaxSizeInterval);  // far below: the longest wait
    CHECK(next_size_interval(0, 0, 5 * M) == kMinSizeInterval);    // a small cap: the shortest
    CHECK(next_size_interval(0, 900 * M, G) == 62);                // 124 MB left: half of it at 1 GiB/s
    CHECK(next_size_interval(0, 2 * G, G) == kMinSizeInterval);    // past it (the report stops the run)
    // A walk costs at most a tenth of the time, near the cap or not.
    CHECK(next_size_interval(100, 0, 5 * M) == 1000);
    CHECK(next_size_interval(2000, 0, 100 * G) == 20000);
}

TEST_CASE("limits: upper-layer usage counts blocks and refuses what it cannot walk") {
    testtree::TempDir t;
    testtree::make(t.path + "/a", "dir");
    testtree::write_text(t.path + "/a/big", std::string(100000, 'x'));
    testtree::make(t.path + "/a/link", "symlink:/usr");  // never followed
    auto u = session::tree_usage(::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    CHECK(u.complete);
    CHECK(u.bytes >= 100000);
    CHECK(u.bytes < 1000000);
    // A chain deeper than the walk goes: not complete, so the watch stops
    // the sandbox instead of missing what hides at the bottom.
    std::string deep = t.path + "/d";
    int fd = ::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    for (int i = 0; i < session::kMaxUsageDepth + 5; i++) {
        REQUIRE(::mkdirat(fd, "d", 0755) == 0);
        int sub = ::openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        ::close(fd);
        fd = sub;
    }
    ::close(fd);
    u = session::tree_usage(::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    CHECK_FALSE(u.complete);
    REQUIRE(session::remove_tree(t.path + "/d"));
}

TEST_CASE("memcg: the caller's cgroup v2 dir") {
    const std::string mi =
        "25 1 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw\n"
        "30 25 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate\n";
    const std::string cg = "0::/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope\n";
    CHECK(memcg::v2_dir(cg, mi) ==
          "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope");
    CHECK(memcg::v2_dir("0::/\n", mi) == "/sys/fs/cgroup");
    // Hybrid (this test host): v1 controllers, an empty v2 mounted at unified.
    const std::string hybrid = "40 25 0:30 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
    CHECK(memcg::v2_dir("4:memory:/x\n0::/\n", hybrid) == "/sys/fs/cgroup/unified");
    // cgroup v1 only, no v2 line, a v2 mount of another root, or an escape.
    CHECK(memcg::v2_dir("4:memory:/x\n", mi).empty());
    CHECK(memcg::v2_dir(cg, "25 1 0:22 / /sys rw - sysfs sysfs rw\n").empty());
    CHECK(memcg::v2_dir(cg, "30 25 0:26 /user.slice /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n").empty());
    CHECK(memcg::v2_dir("0::/../x\n", mi).empty());
    CHECK(memcg::v2_dir("0::/a\n", "30 25 0:26 / /mnt/c\\040g rw - cgroup2 cgroup2 rw\n") == "/mnt/c g/a");
}

TEST_CASE("memcg: a cgroup only where it is delegated and ours alone") {
    CHECK(memcg::lists_word("cpuset cpu io memory pids", "memory"));
    CHECK_FALSE(memcg::lists_word("cpu io memoryx pids", "memory"));
    CHECK(memcg::lists_only("4242\n", 4242));
    CHECK_FALSE(memcg::lists_only("4242\n4243\n", 4242));
    CHECK_FALSE(memcg::lists_only("", 4242));
    memcg::Probe p;
    CHECK(memcg::why_not(p).find("no cgroup v2") != std::string::npos);
    p.dir = "/sys/fs/cgroup/x";
    CHECK(memcg::why_not(p).find("memory controller is not available") != std::string::npos);
    p.memory = true;
    CHECK(memcg::why_not(p).find("not delegated to you") != std::string::npos);
    p.writable = true;
    CHECK(memcg::why_not(p).find("systemd-run --user --scope -p Delegate=yes") != std::string::npos);
    p.only_us = true;
    CHECK(memcg::why_not(p).empty());
}

TEST_CASE("memcg: with no delegated cgroup, --max-memory says it is per process") {
    std::vector<std::string> notices;
    auto none = memcg::Scope::for_limit(0, &notices);
    CHECK(notices.empty());
    CHECK(none.sandbox_dir().empty());
    // The test process shares its cgroup with others (or has no v2 memory
    // controller): the RLIMIT_AS fallback, said in one line.
    auto s = memcg::Scope::for_limit(200ull << 20, &notices);
    REQUIRE(notices.size() == 1);
    CHECK(s.sandbox_dir().empty());
    CHECK(notices[0].rfind("--max-memory 200M applies per process (RLIMIT_AS)", 0) == 0);
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

TEST_CASE("session lock: a status's passing shared lock is waited out, a holder's is not") {
    testtree::TempDir t;
    base::Fd peek(::open(t.path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    REQUIRE(::flock(peek.get(), LOCK_SH | LOCK_NB) == 0);  // as is_locked() holds it, briefly
    std::thread release([&] {
        struct timespec ms5 {
            0, 5000000
        };
        ::nanosleep(&ms5, nullptr);
        ::flock(peek.get(), LOCK_UN);
    });
    auto lk = session::lock(t.path, "s");
    release.join();
    CHECK(lk);
    // Held for good: still refused, naming the session; no run's metadata
    // there, so a verb's hold, not "is running (supervisor pid 0)".
    auto again = session::lock(t.path, "s");
    REQUIRE(!again);
    CHECK(again.error().message.find("session 's' is in use by another layover verb") != std::string::npos);
}
