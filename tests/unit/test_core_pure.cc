// Unit tests for the core's pure helpers: overlay options, mountinfo
// parsing, id maps, run argument parsing, and text escaping.
#include <dirent.h>
#include <sys/prctl.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "helper/base/clock.h"
#include "helper/base/dir.h"
#include "helper/base/term.h"
#include "helper/base/text.h"
#include "helper/base/title.h"
#include "helper/sandbox/policy/run_args.h"
#include "helper/store/records/userns.h"
#include "overlay/mountinfo.h"
#include "overlay/options.h"

TEST_CASE("overlay: option values escape separators") {
    CHECK(overlay::escape_option_value("/a/b") == "/a/b");
    CHECK(overlay::escape_option_value("/a,b:c\\d") == "/a\\,b\\:c\\\\d");
    CHECK(overlay::overlay_options("/proc/self/fd/5", "/u", "/w") ==
          "lowerdir=/proc/self/fd/5,upperdir=/u,workdir=/w,userxattr,volatile");
    CHECK(overlay::read_only_options({"/proc/self/fd/8", "/a:b"}) ==
          "lowerdir=/proc/self/fd/8:/a\\:b,userxattr,xino=on");
}

TEST_CASE("overlay: sizes parse with suffixes and percentages") {
    unsigned long long v = 0;
    CHECK(overlay::parse_size("512M", 0, &v));
    CHECK(v == 512ull << 20);
    CHECK(overlay::parse_size("2G", 0, &v));
    CHECK(v == 2ull << 30);
    CHECK(overlay::parse_size("4096", 0, &v));
    CHECK(v == 4096);
    CHECK(overlay::parse_size("10%", 1000, &v));
    CHECK(v == 100);
    CHECK_FALSE(overlay::parse_size("", 0, &v));
    CHECK_FALSE(overlay::parse_size("12X", 0, &v));
    CHECK_FALSE(overlay::parse_size("0", 0, &v));
    CHECK_FALSE(overlay::parse_size("101%", 100, &v));
    CHECK_FALSE(overlay::parse_size("99999999999999999999", 0, &v));
    CHECK(overlay::default_tmp_size(4ull << 30) == 1ull << 30);
    CHECK(overlay::default_tmp_size(64ull << 30) == 2ull << 30);
}

TEST_CASE("overlay: the private tmpfs has one inode per 8 KiB of its size, at least 1024 (attack38)") {
    CHECK(overlay::tmp_inodes(2ull << 30) == 262144);
    CHECK(overlay::tmp_inodes(16ull << 20) == 2048);
    CHECK(overlay::tmp_inodes(1ull << 20) == 1024);
    CHECK(overlay::tmp_inodes(0) == 1024);
}

TEST_CASE("overlay: mountinfo parsing and submounts under a dir") {
    std::string text =
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "30 22 0:5 / /home/u/my\\040disk rw shared:2 - fuse sshfs rw\n"
        "31 30 0:6 / /home/u/my\\040disk/inner rw - tmpfs tmpfs rw\n"
        "32 22 0:7 / /home/u2 rw - tmpfs tmpfs rw\n"
        "33 22 0:8 / /home/u rw - tmpfs tmpfs rw\n"
        "garbage line\n";
    auto m = overlay::parse_mountinfo(text);
    REQUIRE(m.size() == 5);
    CHECK(m[1].mount_point == "/home/u/my disk");
    CHECK(m[1].fs_type == "fuse");
    auto subs = overlay::submounts_under(m, "/home/u");
    REQUIRE(subs.size() == 1);  // the inner one rides along with the recursive clone
    CHECK(subs[0] == "/home/u/my disk");
    CHECK(overlay::path_within("/home/u/x", "/home/u"));
    CHECK(overlay::path_within("/home/u", "/home/u"));
    CHECK_FALSE(overlay::path_within("/home/u2", "/home/u"));
    CHECK(overlay::path_within("/anything", "/"));
}

TEST_CASE("userns: one-line id maps") {
    CHECK(userns::one_line_map(0, 1000) == "0 1000 1\n");
    CHECK(userns::one_line_map(1000, 0) == "1000 0 1\n");
}

namespace {
base::Result<RunOptions> parse(std::vector<std::string> a) { return parse_run_args(a); }
}  // namespace

TEST_CASE("run: arguments parse, and stop at the command") {
    auto r = parse(
        {"--target", "/t", "--session=s1", "--on-exit", "save:x.tar.zst", "--network", "host", "ls", "-l", "--target"});
    REQUIRE(r.ok());
    CHECK(r->target == "/t");
    CHECK(r->session == "s1");
    CHECK(r->on_exit == "save:x.tar.zst");
    CHECK(r->network == "host");
    CHECK(r->command == std::vector<std::string>{"ls", "-l", "--target"});
    auto d = parse({"--", "--weird"});
    REQUIRE(d.ok());
    CHECK(d->command == std::vector<std::string>{"--weird"});
    CHECK(parse({"--ipc-fd", "5"})->ipc_fd == 5);
}

TEST_CASE("run: --on-exit save:~/FILE is under $HOME (no shell expands it)") {
    const char* old = std::getenv("HOME");
    std::string saved = old ? old : "";
    ::setenv("HOME", "/home/ann", 1);
    CHECK(parse({"--on-exit", "save:~/w.tar.zst"})->on_exit == "save:/home/ann/w.tar.zst");
    CHECK(parse({"--on-exit=save:~/d/w.tar.zst"})->on_exit == "save:/home/ann/d/w.tar.zst");
    CHECK(parse({"--on-exit", "save:x~/w.tar.zst"})->on_exit == "save:x~/w.tar.zst");
    CHECK(parse({"--on-exit", "save:~w.tar.zst"})->on_exit == "save:~w.tar.zst");
    if (old) ::setenv("HOME", saved.c_str(), 1);
    else ::unsetenv("HOME");
}

TEST_CASE("text: a leading ~/ becomes an absolute home's, nothing else does") {
    CHECK(base::expand_home("~/w.tar.zst", "/home/ann") == "/home/ann/w.tar.zst");
    CHECK(base::expand_home("~/", "/home/ann") == "/home/ann/");
    CHECK(base::expand_home("~", "/home/ann") == "~");
    CHECK(base::expand_home("~ann/w", "/home/ann") == "~ann/w");
    CHECK(base::expand_home("x/~/w", "/home/ann") == "x/~/w");
    CHECK(base::expand_home("~/w", "relative") == "~/w");
    CHECK(base::expand_home("~/w", "") == "~/w");
    CHECK(base::expand_home("~/w", nullptr) == "~/w");
}

TEST_CASE("run: bad arguments are usage errors with the fix") {
    CHECK(parse({"--bogus"}).error().message.find("unknown option '--bogus'") != std::string::npos);
    CHECK(parse({"--target"}).error().message.find("needs a value") != std::string::npos);
    CHECK(parse({"--session", "a/b"}).error().message.find("invalid --session") != std::string::npos);
    CHECK(parse({"--on-exit", "nope"}).error().message.find("unknown --on-exit") != std::string::npos);
    CHECK(parse({"--on-exit", "save:"}).error().message.find("needs a file name") != std::string::npos);
    CHECK(parse({"--network", "bridge"}).error().message.find("use loopback, none or host") != std::string::npos);
    CHECK(parse({"--ipc-fd", "1"}).error().message.find(">= 3") != std::string::npos);
    CHECK(parse({"--ipc-fd", "x"}).error().message.find(">= 3") != std::string::npos);
}

TEST_CASE("text: display paths escape control chars and invalid UTF-8") {
    CHECK(base::display_path("plain/name.txt") == "plain/name.txt");
    CHECK(base::display_path("caf\xc3\xa9") == "caf\xc3\xa9");
    CHECK(base::display_path("a\nb") == "\"a\\nb\"");
    CHECK(base::display_path("x\xff") == "\"x\\xff\"");
    CHECK(base::display_path("q\"\\") == "\"q\\\"\\\\\"");
    CHECK(base::display_path("\x1b[31m") == "\"\\x1b[31m\"");
    CHECK(base::is_utf8("ok \xe2\x82\xac"));
    CHECK_FALSE(base::is_utf8("\xc0\xaf"));      // overlong
    CHECK_FALSE(base::is_utf8("\xed\xa0\x80"));  // surrogate
    CHECK(base::caret_escape("a\x1b[0m\n", true) == "a^[[0m\n");
    // Valid UTF-8 that steers a terminal is never shown raw: C1 (U+009B is
    // a CSI), bidi overrides and isolates, DEL.
    CHECK(base::display_path("a\xc2\x9b"
                             "31mb") == "\"a\\u009b31mb\"");
    CHECK(base::display_path("evil\xe2\x80\xaetxt.sh") == "\"evil\\u202etxt.sh\"");
    CHECK(base::display_path("\xe2\x81\xa6x\xe2\x81\xa9") == "\"\\u2066x\\u2069\"");
    CHECK(base::display_path("del\x7f") == "\"del\\x7f\"");
    CHECK(base::display_path("\xc2\xa0nbsp") == "\xc2\xa0nbsp");  // U+00A0 is printable
    // Characters drawn as nothing: `notes.txt` + U+200B must not look like
    // `notes.txt`; a tag character (U+E0001, past U+FFFF) gets \U.
    CHECK(base::display_path("notes.txt\xe2\x80\x8b") == "\"notes.txt\\u200b\"");
    CHECK(base::display_path("\xef\xbb\xbfx\xc2\xad") == "\"\\ufeffx\\u00ad\"");
    CHECK(base::display_path("a\xf3\xa0\x80\x81") == "\"a\\U000e0001\"");
    CHECK(base::display_path("\xf0\x9f\x98\x80.png") == "\xf0\x9f\x98\x80.png");  // an emoji is printable
    // A leading or trailing space shows only inside quotes.
    CHECK(base::display_path("notes.txt ") == "\"notes.txt \"");
    CHECK(base::display_path(" notes.txt") == "\" notes.txt\"");
    CHECK(base::display_path("my notes.txt") == "my notes.txt");
    for (const char* raw : {"plain/a.txt", "notes.txt ", " x", "a\nb", "caf\xc3\xa9", "q\"", ""}) {
        std::string out = "> ";
        base::append_display_path(&out, raw);
        CHECK(out == "> " + base::display_path(raw));  // the fast path follows the one rule
    }
    uint32_t cp = 0;
    CHECK(base::utf8_at("\xe2\x82\xac", 0, &cp) == 3);
    CHECK(cp == 0x20AC);
    CHECK(base::caret_escape("\r\x7f", false) == "^M^?");
}

TEST_CASE("text: base64 round trip and session names") {
    for (std::string s :
         {std::string(""), std::string("f"), std::string("fo"), std::string("foo"), std::string("\xff\x00\x80", 3)}) {
        std::string back;
        REQUIRE(base::base64_decode(base::base64_encode(s), &back));
        CHECK(back == s);
    }
    CHECK(base::base64_encode("foo") == "Zm9v");
    std::string out;
    CHECK_FALSE(base::base64_decode("Zm9", &out));
    CHECK_FALSE(base::base64_decode("Z=9v", &out));
    CHECK(base::valid_session_name("a-b_c.1"));
    CHECK_FALSE(base::valid_session_name(""));
    CHECK_FALSE(base::valid_session_name(".."));
    CHECK_FALSE(base::valid_session_name("-rf"));  // would read as an option
    CHECK(base::valid_session_name("a-"));
    CHECK_FALSE(base::valid_session_name("a b"));
    CHECK_FALSE(base::valid_session_name(std::string(65, 'a')));
}

TEST_CASE("term: colors only on a terminal, never under NO_COLOR or TERM=dumb, unless asked for") {
    using base::ColorWhen;
    CHECK(base::decide_color(ColorWhen::Auto, true, nullptr, "xterm-256color"));
    CHECK_FALSE(base::decide_color(ColorWhen::Auto, false, nullptr, "xterm"));  // a pipe or a file
    CHECK_FALSE(base::decide_color(ColorWhen::Auto, true, "1", "xterm"));
    CHECK_FALSE(base::decide_color(ColorWhen::Auto, true, "no", "xterm"));  // any non-empty value
    CHECK(base::decide_color(ColorWhen::Auto, true, "", "xterm"));          // empty: as if unset
    CHECK_FALSE(base::decide_color(ColorWhen::Auto, true, nullptr, "dumb"));
    CHECK(base::decide_color(ColorWhen::Auto, true, nullptr, nullptr));
    // A per-invocation flag wins over the environment, both ways.
    CHECK(base::decide_color(ColorWhen::Always, false, "1", "dumb"));
    CHECK_FALSE(base::decide_color(ColorWhen::Never, true, nullptr, "xterm"));
    ColorWhen w = ColorWhen::Auto;
    CHECK(base::parse_color_when("never", &w));
    CHECK(w == ColorWhen::Never);
    CHECK_FALSE(base::parse_color_when("sometimes", &w));
}

TEST_CASE("base text: one way to write sizes, in powers of 1024") {
    CHECK(base::bytes_text(0) == "0 B");
    CHECK(base::bytes_text(1023) == "1023 B");
    CHECK(base::bytes_text(2048) == "2.0 KiB");
    CHECK(base::bytes_text(38u << 20) == "38 MiB");
    CHECK(base::bytes_text(uint64_t(15) << 40) == "15 TiB");
    CHECK(base::bytes_short(512) == "512B");
    CHECK(base::bytes_short(4096) == "4K");
    CHECK(base::bytes_short(9646899) == "9.2M");
    CHECK(base::bytes_short(5u << 20) == "5M");
    CHECK(base::thousands(1234567) == "1,234,567");
}

TEST_CASE("title: the remembered argv area is overwritten by the title and NULs") {
    // argv as the kernel lays it out: contiguous, NUL-separated.
    char area[] = "layover\0run\0--\0sleep 3078";
    char* argv[] = {area, area + 8, area + 12, area + 15};
    char comm[17] = {};
    ::prctl(PR_GET_NAME, comm);
    base::remember_argv(4, argv);
    base::set_title("layover-remove");
    ::prctl(PR_SET_NAME, comm);
    base::remember_argv(0, nullptr);
    CHECK(std::string(area) == "layover-remove");
    for (size_t i = std::strlen("layover-remove"); i < sizeof area; i++) CHECK(area[i] == '\0');
    CHECK(std::string(area, sizeof area).find("3078") == std::string::npos);
}

TEST_CASE("dir: a listing cut into pieces of about as many subdirs each") {
    std::vector<base::DirEntry> names;
    names.push_back({"a.txt", DT_REG});
    for (int i = 0; i < 10; i++) {
        names.push_back({"d" + std::to_string(i), DT_DIR});
        names.push_back({"f" + std::to_string(i), DT_REG});
    }
    // 4 pieces of 10 subdirs: 2, 3, 2, 3 (names[1 + 2k] is subdir k).
    CHECK(base::split_by_subdirs(names, 4) == std::vector<size_t>{5, 11, 15});
    // Never more pieces than subdirs, each starting at a subdir.
    auto all = base::split_by_subdirs(names, 50);
    CHECK(all.size() == 9);
    for (size_t at : all) CHECK(names[at].type == DT_DIR);
    // Two pieces: where the halves split.
    CHECK(base::split_by_subdirs(names, 2) == std::vector<size_t>{base::split_by_subdirs(names)});
    CHECK(base::split_by_subdirs({{"x", DT_DIR}, {"y", DT_REG}}, 4).empty());
    CHECK(base::split_by_subdirs(names, 1).empty());
}

TEST_CASE("clock: file times past int64 nanoseconds are clamped, never wrapped") {
    CHECK(base::time_ns(0, 0) == 0);
    CHECK(base::time_ns(4294967296, 5) == 4294967296000000005);  // y2106, well within
    CHECK(base::time_ns(-1, 250000000) == -750000000);           // a floor-split time before 1970
    // 2400-01-01 (ext4 holds it): seconds times 1e9 pass INT64_MAX and used to wrap to 1861.
    CHECK(base::time_ns(13569465600, 0) == base::kTimeNsMaxSeconds * 1000000000 + 999999999);
    CHECK(base::time_ns(INT64_MAX, 999999999) > base::time_ns(base::kTimeNsMaxSeconds, 0));
    CHECK(base::time_ns(-13569465600, 0) == -base::kTimeNsMaxSeconds * 1000000000);
    CHECK(base::time_ns(INT64_MIN, 0) < 0);
    CHECK(base::time_ns(base::kTimeNsMaxSeconds, 999999999) == base::kTimeNsMaxSeconds * 1000000000 + 999999999);
}

TEST_CASE("text: an absolute path cleaned lexically keeps its '..'") {
    CHECK(base::clean_path("/") == "/");
    CHECK(base::clean_path("") == "/");
    CHECK(base::clean_path("//a///b/./c/") == "/a/b/c");
    CHECK(base::clean_path("/a/./../b") == "/a/../b");
    CHECK(base::clean_path("/.") == "/");
}
