// The patch reader's data: many decode chunks read back byte-exact, read_data
// reads again only what is asked for, and data libarchive would pass over
// unread (on non-files, beyond a sparse map, past a member's padding) is refused.
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
#include "tests/unit/capture_reader_util.h"
#include "tests/unit/capture_tree.h"

using namespace testreader;  // capture_reader_util.h

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
