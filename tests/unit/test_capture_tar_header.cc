// The hand-written tar headers (capture/patch/tar_header.h) must be byte for
// byte what libarchive's pax writer makes, as the patch writer set it up
// before: a patch's bytes do not depend on which of the two wrote a member.
#include <archive.h>
#include <archive_entry.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "capture/patch/tar_header.h"
#include "capture/patch/tar_members.h"

using namespace capture;

namespace {

la_ssize_t append(struct archive*, void* ctx, const void* buf, size_t len) {
    static_cast<std::string*>(ctx)->append(static_cast<const char*>(buf), len);
    return static_cast<la_ssize_t>(len);
}

// What libarchive writes for the header of `h`, set up as TarMembers sets it up
// (its writer's options, and the entry fill_entry makes).
std::string by_libarchive(const TarHead& h) {
    std::string out;
    struct archive* a = archive_write_new();
    archive_write_set_format_pax(a);
    archive_write_set_bytes_in_last_block(a, 1);
    archive_write_set_bytes_per_block(a, 0);
    archive_write_open(a, &out, nullptr, &append, nullptr);
    archive_entry* e = archive_entry_new();
    fill_entry(e, h);
    int r = archive_write_header(a, e);
    REQUIRE((r == ARCHIVE_OK || r == ARCHIVE_WARN));
    std::string headers = out;
    archive_write_fail(a);
    archive_write_free(a);
    archive_entry_free(e);
    return headers;
}

// Ours, or "" when left to libarchive.
std::string by_hand(const TarHead& h) {
    char buf[kTarHeadMax];
    return std::string(buf, tar_head(h, buf));
}

}  // namespace

TEST_CASE("capture tar header: the common members' headers are libarchive's pax headers, byte for byte") {
    std::vector<std::string> paths = {"a",
                                      "x.txt",
                                      "d00/t00000.txt",
                                      "a/b/c",
                                      "sp ace/=%\x01\x7f",
                                      ".layover/sums",
                                      "dir/.wh.gone",
                                      "dir/.wh..wh..opq",
                                      "..x",
                                      "a/.b"};
    for (size_t n = 1; n <= 87; n += 7) {
        paths.push_back(std::string(n, 'n'));
        if (n + 4 <= 87) paths.push_back("dir/" + std::string(n, 'm'));
        if (n + 40 <= 87) paths.push_back(std::string(38, 'p') + "/q/" + std::string(n, 'r'));
    }
    paths.push_back(std::string(87, 'z'));
    paths.push_back(std::string(40, 'y') + "/" + std::string(46, 'w'));
    paths.push_back("y/" + std::string(85, 'w'));
    const int64_t times[] = {0,
                             1,
                             999999999,
                             1795688954844872943,
                             1795688954000000000,
                             100500000000,
                             (int64_t{0x7fffffff} - 1) * 1000000000 + 1,
                             7 * 1000000000LL + 10};
    struct Kind {
        char type;
        uint64_t size;
        std::string link;
    };
    const Kind kinds[] = {{'0', 0, ""},
                          {'0', 4022, ""},
                          {'0', 511, ""},
                          {'0', (uint64_t{1} << 33) - 1, ""},
                          {'1', 0, "d00/t00000.txt"},
                          {'2', 0, "t"},
                          {'2', 0, "../" + std::string(97, 'l')},
                          {'5', 0, ""},
                          {'6', 0, ""}};
    size_t compared = 0;
    for (const auto& p : paths)
        for (int64_t t : times)
            for (const auto& k : kinds)
                for (uint32_t mode : {0644u, 0755u, 04755u, 07777u, 0u}) {
                    TarHead h{p, k.type, mode, t, k.size, k.link};
                    std::string ours = by_hand(h);
                    INFO("len " << p.size() << " " << p << " type " << k.type << " mtime " << t << " mode " << mode);
                    REQUIRE(!ours.empty());  // every one of these is ours to write
                    CHECK(ours == by_libarchive(h));
                    compared++;
                }
    CHECK(compared > 10000);
}

TEST_CASE("capture tar header: what it does not write is left to libarchive") {
    char buf[kTarHeadMax];
    auto ours = [&](TarHead h) { return tar_head(h, buf); };
    CHECK(ours({std::string(88, 'n'), '0', 0644, 0, 1, ""}) == 0);  // libarchive shortens its pax header's name
    CHECK(ours({"d/" + std::string(86, 'n'), '0', 0644, 0, 1, ""}) == 0);
    CHECK(ours({"caf\xc3\xa9", '0', 0644, 0, 1, ""}) == 0);                       // non-ASCII: a pax path record
    CHECK(ours({"a", '2', 0777, 0, 0, std::string(101, 'l')}) == 0);              // a pax linkpath record
    CHECK(ours({"a", '2', 0777, 0, 0, "caf\xc3\xa9"}) == 0);                      // the same
    CHECK(ours({"a", '0', 0644, -1, 1, ""}) == 0);                                // negative mtime
    CHECK(ours({"a", '0', 0644, int64_t{0x7fffffff} * 1000000000, 1, ""}) == 0);  // past ustar's range
    CHECK(ours({"a", '0', 0644, 0, uint64_t{1} << 33, ""}) == 0);                 // a pax size record
    CHECK(ours({"", '0', 0644, 0, 0, ""}) == 0);
    CHECK(ours({"/a", '0', 0644, 0, 0, ""}) == 0);
    CHECK(ours({".", '5', 0755, 0, 0, ""}) == 0);
    CHECK(ours({"a/.", '5', 0755, 0, 0, ""}) == 0);
    CHECK(ours({"a", '3', 0644, 0, 0, ""}) == 0);  // devices never occur in a patch
    CHECK(ours({"a", '0', 0644, 1000000001, 4, ""}) == 1536);
    CHECK(ours({"a", '0', 0644, 1000000000, 4, ""}) == 512);
    CHECK(tar_padding(0) == 0);
    CHECK(tar_padding(1) == 511);
    CHECK(tar_padding(4096) == 0);
}
