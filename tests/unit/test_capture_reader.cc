// The patch reader: valid patches read back exactly; hostile ones (built here)
// are each rejected with one clear line before anything could act on them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/patch/reader.h"
#include "capture/patch/writer.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_patch_util.h"
#include "tests/unit/capture_reader_util.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using namespace testreader;  // capture_reader_util.h

TEST_CASE("capture reader: a valid patch opens with every member and its data") {
    M sparse;
    sparse.name = "sparse";
    sparse.size = 10 << 20;
    sparse.sparse = {{1 << 20, 4096}, {8 << 20, 100}};
    M d;
    d.name = "dir";
    d.type = 'd';
    d.mode = 0700;
    M l;
    l.name = "dir/link";
    l.type = 'l';
    l.link = "../x";
    M h;
    h.name = "hard";
    h.type = 'h';
    h.link = "a.txt";
    std::vector<M> ms = {file("a.txt", "hello\n"), d, l, h, sparse};
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    Patch p = written_and_opened(f, ms);
    const auto& mem = p.members();
    REQUIRE(mem.size() == 5);
    CHECK(mem[0].kind == Member::Kind::File);
    CHECK(mem[1].kind == Member::Kind::Dir);
    CHECK(mem[1].mode == 0700);
    CHECK(mem[2].link_target == "../x");
    CHECK(mem[3].kind == Member::Kind::Hardlink);
    CHECK(mem[4].size == (10u << 20));
    REQUIRE(mem[4].sparse.size() == 2);
    CHECK(mem[4].sparse[1].first == (8u << 20));
    CHECK(p.read_file("a.txt", 100).value() == "hello\n");
    CHECK(p.read_file("hard", 100).value() == "hello\n");
    auto big = p.read_file("sparse", 64 << 20);
    REQUIRE(big.ok());
    CHECK(big->size() == (10u << 20));
    CHECK(big.value()[(1 << 20) + 10] == 'x');
    CHECK(big.value()[(2 << 20)] == '\0');
    CHECK_FALSE(p.read_file("sparse", 1000).ok());
    uint64_t data_bytes = 0;
    REQUIRE(p.read_data([&](const Member& m) -> capture::DataSink {
                 if (m.path != "sparse") return nullptr;
                 return [&](uint64_t off, const char*, size_t n) -> base::Result<void> {
                     CHECK(off >= (1u << 20));
                     data_bytes += n;
                     return base::Ok();
                 };
             }).ok());
    CHECK(data_bytes == 4096 + 100);
}

TEST_CASE("capture reader: rejects path traversal ../x") {
    CHECK(open_error(testpatch::valid_tar({file("../x", "evil")})).find("traversal") != std::string::npos);
    CHECK(open_error(testpatch::valid_tar({file("a/../../x", "evil")})).find("traversal") != std::string::npos);
}

TEST_CASE("capture reader: rejects an absolute path") {
    CHECK(open_error(testpatch::valid_tar({file("/abs", "evil")})).find("absolute") != std::string::npos);
}

TEST_CASE("capture reader: rejects a pax path record overriding an innocent name") {
    std::string raw =
        with_manifest({file("innocent", "x")}, testpatch::pax_override_member("innocent", "../evil", "x"));
    std::string err = open_error(raw);
    CHECK(err.find("traversal") != std::string::npos);
    CHECK(err.find("innocent") == std::string::npos);
}

TEST_CASE("capture reader: rejects empty and dot components") {
    CHECK(open_error(testpatch::valid_tar({file("a//b", "x")})).find("empty path component") != std::string::npos);
    CHECK(open_error(testpatch::valid_tar({file("./a", "x")})).find("'.'") != std::string::npos);
}

TEST_CASE("capture reader: rejects duplicate paths") {
    CHECK(open_error(testpatch::valid_tar({file("a", "1"), file("a", "2")})).find("duplicate") != std::string::npos);
}

TEST_CASE("capture reader: rejects a path both deleted and written") {
    CHECK(open_error(testpatch::valid_tar({file(".wh.a", ""), file("a", "2")})).find("also deletes") !=
          std::string::npos);
    M d;
    d.name = "d";
    d.type = 'd';
    CHECK(open_error(testpatch::valid_tar({file("d/x", "1"), file(".wh.d", "")})).find("writes into") !=
          std::string::npos);
}

TEST_CASE("capture reader: the per-path rules hold in either order and at any depth") {
    M d, e, s, h, f;
    d.name = "d";
    d.type = 'd';
    e.name = "d/e";
    e.type = 'd';
    s.name = "s";
    s.type = 'l';
    s.link = "/etc";
    h.name = "d/h";
    h.type = 'h';
    h.link = "d";  // a dir, not a file member
    f.name = "f";
    f.type = 'p';
    struct Case {
        std::vector<M> members;
        const char* says;
    };
    std::vector<Case> cases = {
        {{file("a", "1"), file("a/x", "2")}, "lies beneath member a, which is a file"},
        {{s, file("s/e/x", "2")}, "lies beneath member s, which is a symlink"},
        {{f, file("f/x", "2")}, "lies beneath member f, which is a fifo"},
        {{file(".wh.a", ""), file(".wh.a", "")}, "deletes a path twice"},
        {{file("a", "1"), file(".wh.a", "")}, "deletes a path the patch also writes"},
        {{d, e, file("d/e/x", "1"), file(".wh.d", "")}, "deletes a path the patch also writes"},
        {{file("d/e/x", "1"), file(".wh.d", "")}, "deletes a dir the patch also writes into"},
        {{file("d/e/x", "1"), file("d/.wh.e", "")}, "deletes a dir the patch also writes into"},
        {{file(".wh.d", ""), d, e}, "writes a path the patch also deletes"},
        {{file(".wh.d", ""), file("d/e/x", "1")}, "writes a path the patch also deletes"},
        {{file("d/x", "1"), file(".wh.e", ""), file("d/y", "1"), file(".wh.d", "")},
         "deletes a dir the patch also writes into"},
        {{file(".wh.d", ""), file("e/x", "1"), file("d/y", "1")}, "writes a path the patch also deletes"},
        {{d, e, d}, "duplicate path"},
        {{file("a", "1"), file("d/.wh..wh..opq", "")}, "not an earlier dir member"},
        {{file("d", "1"), file("d/.wh..wh..opq", "")}, "not an earlier dir member"},
        {{d, file("d/.wh..wh..opq", ""), file("d/.wh..wh..opq", "")}, "marks a dir opaque twice"},
        {{d, h}, "not an earlier file member"},
    };
    for (const auto& c : cases) {
        std::string why = open_error(testpatch::valid_tar(c.members));
        INFO(why);
        CHECK(why.find(c.says) != std::string::npos);
    }
    // Beneath a written dir (marked once) and beside a deleted one: valid.
    M d2 = d, e2 = e;
    std::vector<M> ok = {d2, e2, file("d/e/x", "1"), file("d/e/y", "2"), file("d/z", "3"), file("top", "4")};
    testtree::TempDir t;
    Patch p = written_and_opened(t.path + "/ok.tar.zst", ok);
    CHECK(p.members().size() == ok.size());
}

TEST_CASE("capture reader: rejects a hardlink to a non-member") {
    M h;
    h.name = "b";
    h.type = 'h';
    h.link = "etc/passwd";
    CHECK(open_error(testpatch::valid_tar({file("a", "x"), h})).find("not an earlier file member") !=
          std::string::npos);
}

TEST_CASE("capture reader: a hard link listed with another mode or xattrs than its target is refused") {
    // Apply gives the link its target's inode: show must not list it as
    // something else (found by the attack pass: a 0644 line for a 0755 file).
    M a = file("a.sh", "#!/bin/sh\n");
    a.mode = 0755;
    M h;
    h.name = "notes.txt";
    h.type = 'h';
    h.link = "a.sh";
    h.mode = 0644;
    CHECK(open_error(testpatch::valid_tar({a, h})).find("notes.txt: a hard link to a.sh") != std::string::npos);
    h.mode = 0755;
    h.xattrs = {{"user.k", "v"}};
    CHECK(open_error(testpatch::valid_tar({a, h})).find("a hard link to a.sh") != std::string::npos);
    h.xattrs.clear();
    CHECK(open_error(testpatch::valid_tar({a, h})).empty());
}

TEST_CASE("capture reader: rejects a device member") {
    M c;
    c.name = "dev";
    c.type = 'c';
    CHECK(open_error(testpatch::valid_tar({c})).find("device") != std::string::npos);
}

TEST_CASE("capture reader: rejects a truncated patch") {
    std::vector<M> ms = {file("a", std::string(200000, 'q')), file("b", "tail")};
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    testpatch::write_zst(f, testpatch::valid_tar(ms));
    struct stat st;
    REQUIRE(::stat(f.c_str(), &st) == 0);
    REQUIRE(::truncate(f.c_str(), st.st_size - 10) == 0);
    auto p = Patch::open(f);
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().message.find("truncated") != std::string::npos);
}

TEST_CASE("capture reader: rejects a corrupt patch (zstd checksum)") {
    std::string data;
    for (int i = 0; i < 20000; i++) data += std::to_string(i * 7919 % 10007) + ",";
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    testpatch::write_zst(f, testpatch::valid_tar({file("a", data)}));
    base::Fd fd(::open(f.c_str(), O_RDWR | O_CLOEXEC));
    struct stat st;
    ::fstat(fd.get(), &st);
    char c;
    off_t at = st.st_size / 2;
    REQUIRE(::pread(fd.get(), &c, 1, at) == 1);
    c ^= 0x55;
    REQUIRE(::pwrite(fd.get(), &c, 1, at) == 1);
    auto p = Patch::open(f);
    REQUIRE_FALSE(p.ok());
    INFO(p.error().message);
    CHECK(p.error().message.find("invalid patch") != std::string::npos);
}

TEST_CASE("capture reader: rejects a patch without zstd frame checksums") {
    CHECK(open_error(testpatch::valid_tar({file("a", "x")}), {}, false).find("checksum") != std::string::npos);
}

TEST_CASE("capture reader: a zstd bomb stops at the stored-bytes limit") {
    Limits l;
    l.max_stored_bytes = 1 << 20;
    std::string err = open_error(testpatch::valid_tar({file("zeros", std::string(64 << 20, '\0'))}), l);
    CHECK(err.find("max-stored-bytes") != std::string::npos);
}

TEST_CASE("capture reader: a sparse file claiming petabytes is rejected by the logical-size limit") {
    M s;
    s.name = "huge";
    s.size = int64_t{1} << 50;
    s.sparse = {{0, 4096}};
    CHECK(open_error(testpatch::valid_tar({s})).find("max-logical-bytes") != std::string::npos);
}

TEST_CASE("capture reader: member count and name length limits") {
    Limits l;
    l.max_members = 2;
    CHECK(open_error(testpatch::valid_tar({file("a", ""), file("b", ""), file("c", ""), file("d", "")}), l)
              .find("max-members") != std::string::npos);
    Limits n;
    n.max_name_len = 10;
    CHECK(open_error(testpatch::valid_tar({file(std::string(40, 'n'), "")}), n).find("longer than") !=
          std::string::npos);
}

TEST_CASE("capture reader: rejects a fingerprint mismatch") {
    std::vector<M> ms = {file("a", "real content")};
    std::string manifest = testpatch::manifest_for(ms);
    std::string sums = testpatch::sums_for(manifest, {file("a", "other content")});
    std::string raw = testpatch::tar_of({file(".layover/manifest.json", manifest), ms[0], file(".layover/sums", sums)});
    CHECK(open_error(raw).find("fingerprint mismatch") != std::string::npos);
}

TEST_CASE("capture reader: rejects payload the manifest does not list") {
    std::vector<M> listed = {file("a", "1")};
    std::string manifest = testpatch::manifest_for(listed);
    std::vector<M> actual = {file("a", "1"), file("sneaky", "2")};
    std::string raw = testpatch::tar_of({file(".layover/manifest.json", manifest), actual[0], actual[1],
                                         file(".layover/sums", testpatch::sums_for(manifest, actual))});
    CHECK(open_error(raw).find("not a change in the manifest") != std::string::npos);
}

TEST_CASE("capture reader: rejects a tar without a manifest first") {
    CHECK(open_error(testpatch::tar_of({file("a", "x")})).find("not a layover patch") != std::string::npos);
}

TEST_CASE("capture reader: rejects a missing sums member") {
    std::vector<M> ms = {file("a", "x")};
    std::string raw = testpatch::tar_of({file(".layover/manifest.json", testpatch::manifest_for(ms)), ms[0]});
    CHECK(open_error(raw).find(".layover/sums") != std::string::npos);
}

TEST_CASE("capture writer+reader: a scanned tree round-trips (whiteouts, a remade dir, hardlinks, sparse, xattrs)") {
    testtree::TempDir t;
    std::string up = t.path + "/up", low = t.path + "/low";
    ::mkdir(up.c_str(), 0755);
    ::mkdir(low.c_str(), 0755);
    testtree::make(low + "/gone.txt", "file:bye\n");
    testtree::make(low + "/old", "dir");
    testtree::make(low + "/old/x", "file:x\n");
    testtree::make(up + "/gone.txt", "whiteout");
    testtree::make(up + "/old", "opaque");
    testtree::make(up + "/old/new", "file:new\n");
    testtree::make(up + "/one", "file:linked\n");
    REQUIRE(::link((up + "/one").c_str(), (up + "/two").c_str()) == 0);
    testtree::set_xattr(up + "/one", "user.color", std::string("bl\0ue", 5));
    {
        base::Fd f(::open((up + "/sparse").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
        REQUIRE(::pwrite(f.get(), "end", 3, (64 << 20) - 3) == 3);
    }
    auto scan = scan_dirs(up, low);
    capture::Manifest m;
    m.format = "layover-patch/1";
    m.target = low;
    for (const auto& it : scan.items) m.changes.push_back(it.change);
    m.base = scan.base;
    std::string f = t.path + "/p.tar.zst";
    {
        base::Fd out(::open(f.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        base::Fd upfd(::open(up.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
        auto w = capture::write_patch(out.get(), m, scan.items, upfd.get());
        INFO((w ? "" : w.error().message));
        REQUIRE(w.ok());
    }
    struct stat st;
    REQUIRE(::stat(f.c_str(), &st) == 0);
    CHECK(st.st_size < (1 << 20));  // 64 MiB sparse file stored as its data only
    auto p = Patch::open(f);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    std::map<std::string, const Member*> by;
    int opaque = 0;
    for (const auto& mem : p->members()) {
        if (mem.kind == Member::Kind::Opaque) opaque++;
        else by[mem.path] = &mem;
    }
    // old/ removed and remade: compared with the real old/, not replaced.
    CHECK(opaque == 0);
    REQUIRE(by.count("old/x"));
    CHECK(by["old/x"]->kind == Member::Kind::Whiteout);
    REQUIRE(by.count("old/new"));
    CHECK_FALSE(by.count("old"));
    REQUIRE(by.count("gone.txt"));
    CHECK(by["gone.txt"]->kind == Member::Kind::Whiteout);
    REQUIRE(by.count("one"));
    REQUIRE(by.count("two"));
    CHECK(by["one"]->kind == Member::Kind::File);
    CHECK(by["one"]->xattrs.at("user.color") == std::string("bl\0ue", 5));
    CHECK(by["two"]->kind == Member::Kind::Hardlink);
    CHECK(by["two"]->link_target == "one");
    REQUIRE(by.count("sparse"));
    CHECK(by["sparse"]->size == (64u << 20));
    CHECK_FALSE(by["sparse"]->sparse.empty());
    auto tail = p->read_file("sparse", 128 << 20);
    REQUIRE(tail.ok());
    CHECK(tail->substr(tail->size() - 3) == "end");
    CHECK(p->read_file("old/new", 100).value() == "new\n");
    bool based_x = false;
    for (const auto& b : p->manifest().base) based_x |= b.path == "old/x" && !b.absent;
    CHECK(based_x);
}
