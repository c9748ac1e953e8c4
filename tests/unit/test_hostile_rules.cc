// Pure rules behind issue 21's "patches from someone else": xattr key
// decoding, the target rules, show's per-change details.
#include <catch2/catch.hpp>
#include <string>

#include "capture/scan/entry/names.h"
#include "review/apply/target.h"
#include "review/prompt/listing.h"

TEST_CASE("hostile: xattr names are URL-encoded in pax keys as libarchive writes them", "[hostile]") {
    CHECK(capture::xattr_key_encode("user.plain") == "user.plain");
    CHECK(capture::xattr_key_encode(std::string("user.a%b=c d\x01\x1b\xe9")) == "user.a%25b%3Dc%20d%01%1B%E9");
}

TEST_CASE("hostile: a target must be absolute, canonical, not / and not under /proc /sys /dev", "[hostile]") {
    CHECK(review::target_path_problem("/home/ann") == "");
    CHECK(review::target_path_problem("/procfs/x") == "");
    CHECK(review::target_path_problem("/") == "is the root directory");
    CHECK(review::target_path_problem("home/ann") == "is not an absolute path");
    CHECK(review::target_path_problem("") == "is not an absolute path");
    CHECK(review::target_path_problem("/home/ann/").find("not canonical") != std::string::npos);
    CHECK(review::target_path_problem("/home//ann").find("not canonical") != std::string::npos);
    CHECK(review::target_path_problem("/home/./ann").find("not canonical") != std::string::npos);
    CHECK(review::target_path_problem("/home/ann/..").find("not canonical") != std::string::npos);
    CHECK(review::target_path_problem("/proc") == "lies under /proc");
    CHECK(review::target_path_problem("/proc/self/cwd") == "lies under /proc");
    CHECK(review::target_path_problem("/sys/fs") == "lies under /sys");
    CHECK(review::target_path_problem("/dev/shm") == "lies under /dev");
}

TEST_CASE("hostile: within_home is the home or beneath it; no home contains nothing", "[hostile]") {
    CHECK(review::within_home("/home/ann", "/home/ann"));
    CHECK(review::within_home("/home/ann/p", "/home/ann"));
    CHECK_FALSE(review::within_home("/home/anna", "/home/ann"));
    CHECK_FALSE(review::within_home("/home", "/home/ann"));
    CHECK_FALSE(review::within_home("/home/ann", ""));
    CHECK_FALSE(review::within_home("/home/ann", "/"));
}

TEST_CASE("hostile: an apply never reaches layover's state dir, from above or from inside", "[hostile]") {
    using review::state_dir_problem;
    const std::vector<std::string> none, some{"src/a.c", ".lstatex"};
    CHECK(state_dir_problem("/home/ann", "/var/tmp/layover-1000", some).empty());
    CHECK(state_dir_problem("/home/ann", "", some).empty());
    CHECK(state_dir_problem("/home/ann", "/home/ann/.lstate", some).empty());
    CHECK(state_dir_problem("/home/ann", "/home/ann/.lstate", none).empty());
    CHECK(state_dir_problem("/var/tmp/layover-1000", "/var/tmp/layover-1000", none).find("target ") == 0);
    CHECK(state_dir_problem("/var/tmp/layover-1000/sessions/s/upper", "/var/tmp/layover-1000", none)
              .find("lies in layover's state dir /var/tmp/layover-1000") != std::string::npos);
    CHECK(state_dir_problem("/var/tmp/layover-10", "/var/tmp/layover-1000", none).empty());
    CHECK(state_dir_problem("/var/tmp", "/var/tmp/layover-1000", {"layover-100", "layover-10000"}).empty());
    for (const char* p : {"layover-1000", "layover-1000/journal/x.json", "layover-1000/sessions"})
        CHECK(state_dir_problem("/var/tmp", "/var/tmp/layover-1000", {"ok", p}) ==
              std::string(p) +
                  " would change layover's state dir /var/tmp/layover-1000 (sessions, journals, undo records); "
                  "leave it out with --exclude " +
                  p + "; nothing was applied");
    CHECK_FALSE(state_dir_problem("/home/ann", "/home/ann/.local/state/layover", {".local"}).empty());
}

TEST_CASE("hostile: change details show mode changes, sizes and risk marks", "[hostile]") {
    capture::Change c;
    c.path = "bin/tool";
    c.kind = capture::Kind::Added;
    c.type = capture::Type::File;
    c.mode = 06777;
    c.size = 2048;
    review::RiskContext ctx;
    std::string d = review::change_details(c, ctx);
    CHECK(d.find("[6777, 2.0 KiB]") == 2);
    CHECK(d.find("! ") != std::string::npos);
    CHECK(d.find("setuid/setgid bit (never applied)") != std::string::npos);
    c.kind = capture::Kind::Metadata;
    c.old_type = capture::Type::File;
    c.old_mode = 0644;
    c.mode = 0600;
    c.size = 5;
    CHECK(review::change_details(c, ctx) == "  [0644 -> 0600, 5 B]");
    c.kind = capture::Kind::Deleted;
    c.type = capture::Type::None;
    CHECK(review::change_details(c, ctx) == "");
}

TEST_CASE("hostile: diff --stat's marked changes are the risky or set-id/sticky ones, in show's form") {
    auto change = [](std::string path, capture::Type type, uint32_t mode, uint64_t size) {
        capture::Change c;
        c.path = std::move(path);
        c.kind = capture::Kind::Added;
        c.type = type;
        c.mode = mode;
        c.size = size;
        return c;
    };
    std::vector<capture::Change> cs = {
        change(".bashrc", capture::Type::File, 0644, 15), change("plain.txt", capture::Type::File, 0644, 3),
        change("run.sh", capture::Type::File, 0755, 5),   change("shared", capture::Type::Dir, 01777, 0),
        change("keep", capture::Type::Dir, 01755, 0),     change("tool", capture::Type::File, 06755, 10),
        change("\x1b[2Jx", capture::Type::File, 0755, 1),
    };
    review::RiskContext ctx;
    ctx.home_rel = std::string();
    auto all = review::risk_lines(
        cs, ctx, [](std::string_view) { return true; }, true);
    CHECK(all ==
          "layover: 5 changes marked ! need a careful look:\n"
          "  A  .bashrc  [0644, 15 B]  ! shell startup file\n"
          "  A  run.sh  [0755, 5 B]  ! executable\n"
          "  A  shared/  [1777]  ! group/world-writable\n"
          "  A  tool  [6755, 10 B]  ! executable, setuid/setgid bit (never applied)\n"
          "  A  \"\\x1b[2Jx\"  [0755, 1 B]  ! executable\n"
          "layover: 1 change with a set-id or sticky bit:\n"
          "  A  keep/  [1755]\n");  // the sticky bit alone: no risk, but shown
    // Without details (`diff`): the lines status prints, the sticky dir left out.
    auto plain = review::risk_lines(
        cs, ctx, [](std::string_view p) { return p == "run.sh" || p == "keep"; }, false);
    CHECK(plain == "layover: 1 change marked ! need a careful look:\n  A  run.sh  ! executable\n");
    auto some = review::risk_lines(
        cs, ctx, [](std::string_view p) { return p == "run.sh"; }, true);
    CHECK(some == "layover: 1 change marked ! need a careful look:\n  A  run.sh  [0755, 5 B]  ! executable\n");
    CHECK(review::risk_lines(
              cs, ctx, [](std::string_view p) { return p == "plain.txt"; }, true)
              .empty());
}
