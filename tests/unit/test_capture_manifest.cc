// Name rules, display escaping, the lossless JSON name encoding, the manifest
// round trip and the short summary.
#include <catch2/catch.hpp>

#include "capture/patch/agreement.h"
#include "capture/patch/manifest.h"
#include "capture/scan/entry/names.h"
#include "capture/scan/entry/summary.h"
#include "helper/base/text.h"
#include "tests/unit/capture_patch_util.h"

using namespace capture;

TEST_CASE("capture names: relative path rules") {
    CHECK(check_relative_path("a/b c/d", 4096).empty());
    CHECK(check_relative_path("we\nird\xff", 4096).empty());
    CHECK_FALSE(check_relative_path("", 4096).empty());
    CHECK_FALSE(check_relative_path("/etc/passwd", 4096).empty());
    CHECK_FALSE(check_relative_path("a/../b", 4096).empty());
    CHECK_FALSE(check_relative_path("..", 4096).empty());
    CHECK_FALSE(check_relative_path("a/./b", 4096).empty());
    CHECK_FALSE(check_relative_path("a//b", 4096).empty());
    CHECK_FALSE(check_relative_path("a/", 4096).empty());
    CHECK_FALSE(check_relative_path(std::string("a\0b", 3), 4096).empty());
    CHECK_FALSE(check_relative_path("abcdef", 5).empty());
}

TEST_CASE("capture names: OCI whiteout names") {
    std::string p;
    CHECK(name_role("d/.wh.x", &p) == NameRole::Whiteout);
    CHECK(p == "d/x");
    CHECK(name_role(".wh.top", &p) == NameRole::Whiteout);
    CHECK(p == "top");
    CHECK(name_role("d/.wh..wh..opq", &p) == NameRole::Opaque);
    CHECK(p == "d");
    CHECK(name_role(".wh..wh..opq", &p) == NameRole::Reserved);
    CHECK(name_role("d/.wh..wh.plnk", &p) == NameRole::Reserved);
    CHECK(name_role("d/.wh..", &p) == NameRole::Reserved);
    CHECK(name_role("d/x.wh.y", &p) == NameRole::Plain);
    CHECK(whiteout_name("a/b") == "a/.wh.b");
    CHECK(whiteout_name("b") == ".wh.b");
    CHECK(opaque_name("a") == "a/.wh..wh..opq");
}

TEST_CASE("capture json: non-UTF-8 names keep their exact bytes in *_b64") {
    json j = json::object();
    testpatch::put_bytes(j, "path", "ok/é");
    CHECK(j["path"] == "ok/é");
    CHECK_FALSE(j.contains("path_b64"));
    std::string raw = "we\nird\xff";
    json k = json::object();
    testpatch::put_bytes(k, "path", raw);
    CHECK(k["path"] == base::display_path(raw));
    CHECK(k["path_b64"] == base::base64_encode(raw));
    std::string back;
    REQUIRE(testpatch::get_bytes(k, "path", &back));
    CHECK(back == raw);
    // Control characters in valid UTF-8 stay in "path" (JSON escapes them itself).
    json n = json::object();
    testpatch::put_bytes(n, "path", "new\nline");
    CHECK(n["path"] == "new\nline");
}

TEST_CASE("capture json: the manifest round-trips every field") {
    Manifest m;
    m.format = "layover-patch/1";
    m.target = "/home/u";
    m.session = "s1";
    m.command = {"sh", "-c", "echo \xff"};
    m.created = "2024-01-02T03:04:05Z";
    m.version = "0.1.0";
    Change c;
    c.path = "dir/na\xffme";
    c.kind = Kind::TypeChanged;
    c.type = Type::Symlink;
    c.link_target = "tar\x01get\xfe";
    c.old_type = Type::Dir;
    c.old_mode = 0755;
    c.mode = 0777;
    c.mtime_ns = 1234567890123456789;
    c.xattrs["user.bin"] = std::string("\0\x01\xff", 3);
    Change s;
    s.path = "sock";
    s.kind = Kind::Added;
    s.type = Type::Socket;
    s.captured = false;
    m.changes = {c, s};
    BaseEntry b1;
    b1.path = "dir/na\xffme";
    b1.type = Type::Dir;
    b1.mode = 0755;
    b1.stale = true;
    BaseEntry b2;
    b2.path = "new";
    b2.absent = true;
    BaseEntry b3;
    b3.path = "f";
    b3.type = Type::File;
    b3.size = 12;
    b3.mode = 0600;
    b3.fingerprint = std::string(32, 'a');
    m.base = {b1, b2, b3};
    auto back = manifest_from_text(manifest_to_text(m));
    REQUIRE(back.ok());
    const Manifest& r = back.value();
    CHECK(r.target == m.target);
    CHECK(r.command == m.command);
    CHECK(r.created == m.created);
    REQUIRE(r.changes.size() == 2);
    CHECK(r.changes[0].path == c.path);
    CHECK(r.changes[0].kind == Kind::TypeChanged);
    CHECK(r.changes[0].type == Type::Symlink);
    CHECK(r.changes[0].link_target == c.link_target);
    CHECK(r.changes[0].old_type == Type::Dir);
    CHECK(r.changes[0].old_mode == 0755);
    CHECK(r.changes[0].mode == 0777);
    CHECK(r.changes[0].mtime_ns == c.mtime_ns);
    CHECK(r.changes[0].xattrs == c.xattrs);
    CHECK_FALSE(r.changes[1].captured);
    REQUIRE(r.base.size() == 3);
    CHECK(r.base[0].stale);
    CHECK(r.base[0].path == b1.path);
    CHECK(r.base[1].absent);
    CHECK(r.base[2].fingerprint == b3.fingerprint);
    CHECK(r.base[2].size == 12);
}

TEST_CASE("capture json: a manifest of another format or with bad fields is refused") {
    CHECK_FALSE(manifest_from_text("{\"format\":\"layover-patch/9\"}").ok());
    CHECK_FALSE(manifest_from_text("[]").ok());
    CHECK_FALSE(manifest_from_text("{\"format\":\"layover-patch/1\",\"target\":\"/\",\"changes\":[{\"path\":\"a\","
                                   "\"kind\":\"exploded\"}],\"base\":[]}")
                    .ok());
}

TEST_CASE("capture summary: git-status-like lines with escaped names and a total") {
    Change a;
    a.path = "new\nfile";
    a.kind = Kind::Added;
    a.type = Type::File;
    Change d;
    d.path = "old";
    d.kind = Kind::Deleted;
    d.old_type = Type::Dir;
    Change m;
    m.path = "run.sh";
    m.kind = Kind::Metadata;
    m.type = Type::File;
    m.mode = 0755;
    m.old_mode = 0644;
    Change s;
    s.path = "sock";
    s.kind = Kind::Added;
    s.type = Type::Socket;
    s.captured = false;
    std::string text = summary_text({a, d, m, s}, {"run.sh"});
    CHECK(text.find("A  \"new\\nfile\"\n") != std::string::npos);
    CHECK(text.find("D  old/\n") != std::string::npos);
    CHECK(text.find("m  run.sh  (mode 644 -> 755, changed on disk after the sandbox's version)\n") !=
          std::string::npos);
    CHECK(text.find("socket, not captured") != std::string::npos);
    CHECK(text.find("4 changes: 2 added, 1 deleted, 1 metadata\n") != std::string::npos);
    CHECK(summary_text({}) == "no changes\n");
}

TEST_CASE("manifest agreement: a file or symlink base record needs its fingerprint") {
    for (Type t : {Type::File, Type::Symlink}) {
        Manifest m;
        BaseEntry b;
        b.path = "a";
        b.type = t;
        b.size = 1;
        b.mode = 0644;
        m.base.push_back(b);
        std::string why = check_agreement(m, {}, Limits{});
        CHECK(why == "manifest base a: a file or symlink record without a fingerprint");
        m.base[0].fingerprint = std::string(32, '0');
        CHECK(check_agreement(m, {}, Limits{}).find("without a fingerprint") == std::string::npos);
    }
}

TEST_CASE("summary: a new directory folds into one line; --expand lists every path") {
    using capture::Change;
    using capture::Kind;
    using capture::Type;
    auto mk = [](std::string p, Kind k, Type t, uint64_t size = 0) {
        Change c;
        c.path = std::move(p);
        c.kind = k;
        c.type = t;
        c.size = size;
        c.mode = t == Type::Dir ? 0755 : 0644;
        c.mtime_ns = 1;
        return c;
    };
    std::vector<Change> v = {mk("a.txt", Kind::Modified, Type::File, 3),
                             mk("venv", Kind::Added, Type::Dir),
                             mk("venv/bin", Kind::Added, Type::Dir),
                             mk("venv/bin/python", Kind::Added, Type::File, 2048),
                             mk("venv/lib.so", Kind::Added, Type::File, 40ull << 20),
                             mk("venvs.txt", Kind::Added, Type::File, 1)};
    std::string folded = capture::summary_text(v);
    // The total counts what venv/ holds: it says the listing folds it (ux9).
    CHECK(folded ==
          "M  a.txt\nA  venv/  (2 files, 40 MiB)\nA  venvs.txt\n6 changes: 5 added, 1 modified (listed on 3 lines: a "
          "new dir's line stands for what it holds)\n");
    std::string expanded = capture::summary_text(v, {}, false);
    CHECK(expanded.find("\n6 changes: 5 added, 1 modified\n") != std::string::npos);  // one line each: as before
    CHECK(expanded.find("A  venv/bin/python\n") != std::string::npos);
    auto f = capture::fold_at(v, 1);
    CHECK(f.end == 5);
    CHECK(f.files == 2);
    CHECK(capture::fold_at(v, 0).end == 1);  // a modified file folds nothing
    v[3].mode = 0;
    v[3].mtime_ns = 0;  // a summary-only scan: size unknown, so not shown
    CHECK(capture::fold_note(capture::fold_at(v, 1)) == "2 files");
}
