// The patch reader: valid patches read back exactly; hostile ones (built here)
// are each rejected with one clear line before anything could act on them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/patch/reader.h"
#include "capture/patch/tar_in.h"
#include "capture/patch/writer.h"
#include "capture/patch/zstream.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_patch_util.h"
#include "tests/unit/capture_scan_util.h"
#include "tests/unit/capture_tree.h"

using capture::Limits;
using capture::Member;
using capture::Patch;
using testpatch::M;

namespace {

M file(const std::string& name, const std::string& data) {
    M m;
    m.name = name;
    m.data = data;
    return m;
}

// Open raw tar bytes as a patch and return the error ("" when it opened).
std::string open_error(const std::string& raw, const Limits& limits = {}, bool checksum = true) {
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    testpatch::write_zst(f, raw, checksum);
    auto p = Patch::open(f, limits);
    if (p) return "";
    std::string msg = p.error().message;
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(msg.find(f) != std::string::npos);
    return msg;
}

std::string with_manifest(const std::vector<M>& ms, const std::string& payload_tar_without_end) {
    M man = file(".layover/manifest.json", testpatch::manifest_for(ms));
    std::string head = testpatch::tar_of({man});
    head.resize(head.size() - 1024);  // drop its end blocks
    return head + payload_tar_without_end + testpatch::tar_end();
}

// Writes a valid patch of ms to f and opens it (which must succeed).
Patch written_and_opened(const std::string& f, const std::vector<M>& ms) {
    testpatch::write_zst(f, testpatch::valid_tar(ms));
    auto p = Patch::open(f);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    return std::move(p.value());
}

}  // namespace

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

// --- headers: what libarchive takes in before the reader's checks ------------

namespace {

// A GNU sparse 1.0 member whose map has `entries` (0, 0) entries: megabytes
// of "0\n0\n" that zstd shrinks to kilobytes, each entry an allocation in
// libarchive.
std::string sparse_bomb(size_t entries) {
    std::string map = std::to_string(entries) + "\n";
    map.reserve(map.size() + entries * 4);
    for (size_t i = 0; i < entries; i++) map += "0\n0\n";
    map.resize((map.size() + 511) / 512 * 512, '\0');
    std::string member = testpatch::pax_member("GNUSparseFile.0/big",
                                               {{"GNU.sparse.major", "1"},
                                                {"GNU.sparse.minor", "0"},
                                                {"GNU.sparse.name", "big"},
                                                {"GNU.sparse.realsize", "0"}},
                                               '0', map);
    M big = file("big", "");
    return with_manifest({big}, member);
}

}  // namespace

TEST_CASE("capture reader: header meter credits only digit lines, across chunk boundaries") {
    capture::HeaderMeter m;
    m.add("12", 2);
    m.add("34\n0\n", 5);  // "1234\n" split over two chunks, then "0\n"
    CHECK(m.lines() == 2);
    CHECK(m.map_bytes() == 7);
    CHECK(m.header_bytes() == 0);
    m.add("\n", 1);  // an empty line reads as 0 in a map: counted
    CHECK(m.lines() == 3);
    m.add("# comment\n30 path=a/b\n", 22);  // skipped by libarchive / a pax record
    CHECK(m.lines() == 3);
    CHECK(m.header_bytes() == 22);
    std::string longline(capture::HeaderMeter::kMapLineMax, '7');
    longline += "\n";
    m.add(longline.data(), longline.size());  // longer than a map line may be
    CHECK(m.lines() == 3);
    CHECK(m.header_bytes() == 22 + longline.size());
    m.reset();
    CHECK(m.lines() == 0);
    CHECK(m.header_bytes() == 0);
}

TEST_CASE("capture reader: header meter budget: pax bytes and map lines") {
    capture::HeaderBudget b;
    b.max_pax_header = 1000;
    b.max_sparse_segments = 10;
    capture::HeaderMeter m;
    std::string pax(1000 + 50, 'a');
    m.add(pax.data(), pax.size());
    CHECK(m.over(b, 50) == "");
    m.add("b", 1);
    CHECK(m.over(b, 50).find("--max-pax-header") != std::string::npos);
    m.reset();
    // 2 lines per segment, plus the count line, plus what pax and slack may hold.
    std::string lines;
    for (uint64_t i = 0; i < 2 * 10 + 2 + 1000 + 50; i++) lines += "5\n";
    m.add(lines.data(), lines.size());
    CHECK(m.over(b, 50) == "");
    m.add("5\n", 2);
    CHECK(m.over(b, 50).find("sparse map of more than 10 segments") != std::string::npos);
}

TEST_CASE("capture reader: a sparse-map bomb is refused while libarchive reads the map") {
    Limits l;
    l.max_pax_header = 4096;
    l.max_sparse_segments = 1000;
    // 200,000 entries: far past the 2 x 1000 + 4096 + 256 Ki lines the budget allows.
    std::string err = open_error(sparse_bomb(200000), l);
    // The meter's message, not the validator's after the fact.
    CHECK(err.find("member #1: a sparse map of more than 1000 segments") != std::string::npos);
}

TEST_CASE("capture reader: a pax header over --max-pax-header is refused with one clear line") {
    std::string member = testpatch::pax_member("x", {{"comment", std::string(600 << 10, 'A')}}, '0', "");
    Limits l;
    l.max_pax_header = 64 << 10;
    std::string err = open_error(with_manifest({file("x", "")}, member), l);
    CHECK(err.find("member #1: headers larger than --max-pax-header allows (65536 bytes)") != std::string::npos);
    // Between the limit and the read-ahead slack: the exact count after the header.
    member = testpatch::pax_member("x", {{"comment", std::string(100 << 10, 'A')}}, '0', "");
    err = open_error(with_manifest({file("x", "")}, member), l);
    CHECK(err.find("member #1 has ") != std::string::npos);
    CHECK(err.find("over the limit of 65536; raise --max-pax-header") != std::string::npos);
    // Over what libarchive itself reads in one pax header, whatever the flag.
    member = testpatch::pax_member("x", {{"comment", std::string(2 << 20, 'A')}}, '0', "");
    l.max_pax_header = 64 << 20;
    err = open_error(with_manifest({file("x", "")}, member), l);
    CHECK(err.find("member #1: a pax or long-name header larger than 1 MiB") != std::string::npos);
    CHECK(err.find("Special header") == std::string::npos);
}

TEST_CASE("capture reader: a file with max_sparse_segments segments opens, one more is refused") {
    Limits l;
    l.max_sparse_segments = 1'000'000;  // the default: large legit maps must stay readable
    REQUIRE(l.max_sparse_segments == Limits{}.max_sparse_segments);
    M s;
    s.name = "holey";
    // Offsets near 15 TiB, so each map line is as long as a huge file's.
    int64_t base = int64_t{15} << 40;
    for (int64_t i = 0; i < 1'000'000; i++) s.sparse.push_back({base + i * 2, 1});
    s.size = base + 2'000'000;
    {
        testtree::TempDir t;
        std::string f = t.path + "/p.tar.zst";
        testpatch::write_zst(f, testpatch::valid_tar({s}));
        auto p = Patch::open(f);
        INFO((p ? "" : p.error().message));
        REQUIRE(p.ok());
        REQUIRE(p->members().size() == 1);
        CHECK(p->members()[0].sparse.size() == 1'000'000);
        CHECK(p->members()[0].sparse.back().first == static_cast<uint64_t>(base + 1'999'998));
        uint64_t n = 0;
        REQUIRE(p->read_data([&](const Member&) -> capture::DataSink {
                     return [&](uint64_t, const char*, size_t len) -> base::Result<void> {
                         n += len;
                         return base::Ok();
                     };
                 }).ok());
        CHECK(n == 1'000'000);
    }
    s.sparse.push_back({base + 2'000'000, 1});
    s.size += 2;
    std::string err = open_error(testpatch::valid_tar({s}));
    CHECK(err.find("too many sparse segments") != std::string::npos);
}

TEST_CASE("capture reader: a 64 KiB name with large xattrs (near 1 MiB of headers) still opens") {
    std::string name;
    while (name.size() < 65000) name += std::string(200, 'd') + "/";
    name += "f";
    M f = file(name, "data");
    for (char c = 'a'; c < 'g'; c++) f.xattrs.emplace_back(std::string("user.") + c, std::string(40 << 10, c));
    testtree::TempDir t;
    std::string path = t.path + "/p.tar.zst";
    testpatch::write_zst(path, testpatch::valid_tar({f}));
    auto p = Patch::open(path);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    CHECK(p->members()[0].path == name);
    CHECK(p->members()[0].xattrs.size() == 6);
    CHECK(p->members()[0].xattrs.at("user.c") == std::string(40 << 10, 'c'));
}

TEST_CASE("capture reader: manifest xattrs must be user.* and match the payload member's") {
    M f = file("a", "x");
    f.xattrs.emplace_back("user.color", "blue");
    CHECK(open_error(testpatch::valid_tar({f})) == "");
    // The manifest claims an xattr the member does not carry.
    std::vector<M> claimed = {f};
    claimed[0].xattrs.emplace_back("user.hidden", "sneaky");
    std::string manifest = testpatch::manifest_for(claimed);
    std::string raw = testpatch::tar_of(
        {file(".layover/manifest.json", manifest), f, file(".layover/sums", testpatch::sums_for(manifest, {f}))});
    CHECK(open_error(raw).find("member a: xattrs differ between payload and manifest") != std::string::npos);
    // The member carries one the manifest does not list.
    M plain = file("a", "x");
    manifest = testpatch::manifest_for({plain});
    raw = testpatch::tar_of(
        {file(".layover/manifest.json", manifest), f, file(".layover/sums", testpatch::sums_for(manifest, {f}))});
    CHECK(open_error(raw).find("xattrs differ") != std::string::npos);
    // Outside user.*: refused in the manifest itself, named.
    M sec = file("a", "x");
    sec.xattrs.emplace_back("security.capability", "x");
    manifest = testpatch::manifest_for({sec});
    raw = testpatch::tar_of({file(".layover/manifest.json", manifest), plain,
                             file(".layover/sums", testpatch::sums_for(manifest, {plain}))});
    std::string err = open_error(raw);
    CHECK(err.find("security.capability") != std::string::npos);
    CHECK(err.find("only user.* xattrs") != std::string::npos);
}

TEST_CASE("capture reader: a patch of many decode chunks reads back byte-exact; an early stop does not hang") {
    // More than the decoder's read-ahead (kAhead chunks of 1 MiB): the
    // prefetch thread fills up and waits while the caller is still parsing.
    std::vector<M> ms;
    std::vector<std::string> datas;
    uint32_t x = 12345;
    for (int i = 0; i < 9; i++) {
        std::string d((1 << 20) + 777 * static_cast<size_t>(i), '\0');
        for (auto& c : d) {
            x = x * 1103515245u + 12345u;
            c = static_cast<char>('a' + (x >> 16) % 16);
        }
        datas.push_back(d);
        ms.push_back(file("f" + std::to_string(i), d));
    }
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    Patch p = written_and_opened(f, ms);
    for (int i = 0; i < 9; i++) CHECK(p.read_file("f" + std::to_string(i), 4 << 20).value() == datas[i]);
    // Stop after the first header: the destructor stops the decoder and returns.
    {
        base::Fd fd(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
        capture::TarIn tin(fd.get());
        REQUIRE(tin.open().ok());
        uint64_t hb = 0;
        auto e = tin.next(&hb);
        REQUIRE(e.ok());
        CHECK(e.value() != nullptr);
    }
    // Truncated after several chunks: the data before it is handed out, then the error.
    struct stat st;
    REQUIRE(::stat(f.c_str(), &st) == 0);
    REQUIRE(::truncate(f.c_str(), st.st_size / 2) == 0);
    auto bad = Patch::open(f);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("truncated") != std::string::npos);
}

namespace {

// The tar compressed the way layover writes patches: frames of kFrameBytes.
void write_framed(const std::string& f, const std::string& raw) {
    base::Fd out(::open(f.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    capture::ZstdWriter w(out.get());
    REQUIRE(w.write(raw.data(), raw.size()).ok());
    REQUIRE(w.finish().ok());
}

}  // namespace

TEST_CASE("capture reader: read_data reads again only what is asked for, from the recorded offsets, and checks it") {
    std::vector<M> ms;
    std::vector<std::string> datas;
    uint32_t x = 777;
    for (int i = 0; i < 12; i++) {
        std::string d((1 << 20) + 4099 * static_cast<size_t>(i), '\0');
        for (auto& c : d) {
            x = x * 1103515245u + 12345u;
            c = static_cast<char>('a' + (x >> 16) % 20);
        }
        datas.push_back(d);
        ms.push_back(file("f" + std::to_string(i), d));
    }
    M sp;  // sparse, between dense ones
    sp.name = "holey";
    sp.size = 9 << 20;
    sp.sparse = {{4096, 10000}, {5 << 20, 3}};
    ms.insert(ms.begin() + 6, sp);
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    write_framed(f, testpatch::valid_tar(ms));
    auto p = Patch::open(f);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    // Only f2, the sparse file and f11 (the last) are asked for.
    std::map<std::string, std::string> got;
    std::map<std::string, int> visited;
    auto r = p->read_data([&](const Member& m) -> capture::DataSink {
        visited[m.path]++;
        if (m.path != "f2" && m.path != "holey" && m.path != "f11") return nullptr;
        got[m.path].assign(m.size, '\0');
        std::string* into = &got[m.path];
        return [into](uint64_t off, const char* d, size_t n) -> base::Result<void> {
            REQUIRE(off + n <= into->size());
            std::copy(d, d + n, into->data() + off);
            return base::Ok();
        };
    });
    INFO((r ? "" : r.error().message));
    REQUIRE(r.ok());
    CHECK(visited.size() == 13);  // every file is visited, in order
    CHECK(got["f2"] == datas[2]);
    CHECK(got["f11"] == datas[11]);
    std::string holey(9 << 20, '\0');
    std::fill(holey.begin() + 4096, holey.begin() + 4096 + 10000, 'x');
    std::fill(holey.begin() + (5 << 20), holey.begin() + (5 << 20) + 3, 'x');
    CHECK(got["holey"] == holey);
    // The file is rewritten in place with one byte of f9 changed (a valid
    // patch in itself): what comes before it still reads, f9 is refused.
    std::vector<M> changed = ms;
    changed[10].data[777] = static_cast<char>(changed[10].data[777] ^ 1);
    REQUIRE(changed[10].name == "f9");
    write_framed(f, testpatch::valid_tar(changed));
    CHECK(p->read_file("f1", 4 << 20).value() == datas[1]);
    auto bad = p->read_file("f9", 4 << 20);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("changed since it was validated") != std::string::npos);
    CHECK(bad.error().message.find("f9") != std::string::npos);
    // Cut short: an error, not a hang or a short read.
    REQUIRE(::truncate(f.c_str(), 1 << 20) == 0);
    auto cut = p->read_file("f11", 4 << 20);
    REQUIRE_FALSE(cut.ok());
    CHECK(cut.error().message.find("changed since it was validated") != std::string::npos);
}

// --- data libarchive would pass over unread ----------------------------------

TEST_CASE("capture reader: members that are not regular files may not carry data") {
    // A GNU dumpdir ('D') is a directory that libarchive reads with data,
    // which the reader would otherwise pass over unread and uncounted.
    std::string body(1 << 20, 'A');  // a megabyte of one byte: kilobytes once compressed
    M d;
    d.name = "d";
    d.type = 'd';
    std::string err = open_error(with_manifest({d}, testpatch::pax_member("d/", {{"path", "d/"}}, 'D', body)));
    INFO(err);
    CHECK(err.find("member d: a directory member that carries data") != std::string::npos);
}

TEST_CASE("capture reader: data stored beyond a sparse map is never read as data") {
    // The map says "no data"; the member stores a megabyte after it.
    // libarchive trusts the map and reads what follows as headers: refused.
    std::string body = std::string("1\n0\n0\n");
    body.resize(512, '\0');
    body += std::string(1 << 20, 'A');
    std::string member = testpatch::pax_member("GNUSparseFile.0/big",
                                               {{"GNU.sparse.major", "1"},
                                                {"GNU.sparse.minor", "0"},
                                                {"GNU.sparse.name", "big"},
                                                {"GNU.sparse.realsize", "0"}},
                                               '0', body);
    std::string err = open_error(with_manifest({file("big", "")}, member));
    INFO(err);
    CHECK(err.find("bad tar member header") != std::string::npos);
}

TEST_CASE("capture reader: the tar reader passes over at most a member's padding unread") {
    // Whatever libarchive would skip is decoded all the same: more than the
    // padding is refused while it is skipped, not after a zstd bomb is out.
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    testpatch::write_zst(f, testpatch::valid_tar({file("small", "x"), file("big", std::string(8 << 20, 'A'))}));
    base::Fd fd(::open(f.c_str(), O_RDONLY | O_CLOEXEC));
    capture::TarIn tin(fd.get());
    REQUIRE(tin.open().ok());
    uint64_t hb = 0;
    std::vector<std::string> seen;
    std::string err;
    for (;;) {
        auto e = tin.next(&hb);  // data left unread: skipped
        if (!e) {
            err = e.error().message;
            break;
        }
        if (!e.value()) break;
        seen.push_back(archive_entry_pathname(e.value()));
        if (seen.back() == "big") continue;
        for (;;) {  // read: only the padding is left to skip
            const char* p = nullptr;
            size_t n = 0;
            int64_t off = 0;
            REQUIRE(tin.block(&p, &n, &off).ok());
            if (n == 0) break;
        }
    }
    INFO(err);
    CHECK(seen == std::vector<std::string>{".layover/manifest.json", "small", "big"});
    CHECK(err ==
          "member #2: stored data runs past what its size and sparse map account for; the patch is corrupt "
          "or hostile");
}

TEST_CASE("capture reader: an mtime too large for nanoseconds is one clear error") {
    M a = file("a", "x");
    std::string payload = testpatch::pax_member("a", {{"path", "a"}, {"mtime", "99999999999"}}, '0', "x");
    std::string err = open_error(with_manifest({a}, payload));
    INFO(err);
    CHECK(err.find("member a: an mtime out of range") != std::string::npos);
}
