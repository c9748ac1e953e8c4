// The patch reader's header limits: what libarchive takes in before the
// reader's checks (pax records, sparse maps, long names and xattrs) is metered
// and refused with one clear line, while the largest valid headers still open.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/patch/reader.h"
#include "capture/patch/tar_in.h"
#include "capture/patch/writer.h"
#include "tests/unit/capture_patch_util.h"
#include "tests/unit/capture_reader_util.h"
#include "tests/unit/capture_tree.h"

using namespace testreader;  // capture_reader_util.h

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
