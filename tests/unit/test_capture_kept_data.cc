// Decoded data kept from validation (Limits::keep_decoded, apply's): the
// small dense files within the budget are read back from memory as they were
// validated; the others are decoded and checked again as before.
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "capture/patch/kept_data.h"
#include "capture/patch/reader.h"
#include "capture/patch/zstream.h"
#include "helper/base/fd.h"
#include "tests/unit/capture_patch_util.h"
#include "tests/unit/capture_reader_util.h"
#include "tests/unit/capture_tree.h"

using namespace testreader;  // capture_reader_util.h

namespace {

// n bytes cycling through the alphabet from `first`.
std::string bytes(size_t n, char first) {
    std::string d(n, '\0');
    for (size_t i = 0; i < n; i++) d[i] = static_cast<char>('a' + (first - 'a' + i) % 26);
    return d;
}

}  // namespace

TEST_CASE("capture kept data: reserve hands out room back to back within the budget") {
    capture::KeptData none;
    CHECK(none.reserve(10) == -1);  // no budget: nothing kept
    capture::KeptData k(10000);
    CHECK(k.reserve(0) == -1);  // an empty file has nothing to keep
    CHECK(k.reserve(4096) == 0);
    CHECK(k.reserve(4096) == 4096);
    CHECK(k.reserve(4096) == -1);  // over what is left (1808)
    CHECK(k.reserve(1808) == 8192);
    std::memset(k.at(8192), 'x', 1808);  // the room is writable memory
    CHECK(k.at(8192)[1807] == 'x');
    capture::KeptData big(uint64_t{8} << 20);
    CHECK(big.reserve(capture::KeptData::kMemberMax + 1) == -1);  // a big file is read again instead
    CHECK(big.reserve(capture::KeptData::kMemberMax) == 0);
    capture::KeptData moved(std::move(big));
    CHECK(moved.reserve(1) == static_cast<int64_t>(capture::KeptData::kMemberMax));
}

TEST_CASE("capture kept data: kept files read back as validated; the rest is decoded and checked again") {
    std::vector<M> ms;
    std::vector<std::string> datas;
    for (int i = 0; i < 5; i++) {
        datas.push_back(bytes(5000 + static_cast<size_t>(i), static_cast<char>('a' + i)));
        ms.push_back(file("f" + std::to_string(i), datas.back()));
    }
    datas.push_back(bytes((1 << 20) + 1, 'h'));  // over KeptData::kMemberMax
    ms.push_back(file("big", datas.back()));
    testtree::TempDir t;
    std::string f = t.path + "/p.tar.zst";
    write_framed(f, testpatch::valid_tar(ms));
    capture::Limits lim;
    lim.keep_decoded = 16000;  // f0, f1, f2 (15,003 bytes); f3 and f4 no longer fit
    auto p = Patch::open(f, lim);
    INFO((p ? "" : p.error().message));
    REQUIRE(p.ok());
    const auto& members = p->members();
    REQUIRE(members.size() == 6);
    for (size_t i = 0; i < 6; i++) CHECK(p->kept(members[i]) == (i < 3));  // staging hands those on by pointer
    Member copy = members[0];
    CHECK_FALSE(p->kept(copy));  // not one of the patch's own
    for (int i = 0; i < 5; i++) CHECK(p->read_file("f" + std::to_string(i), 1 << 20).value() == datas[i]);
    CHECK(p->read_file("big", 4 << 20).value() == datas[5]);
    // The file rewritten with one byte changed in f1, f3 and big: f1 was
    // kept, so it reads as validated; f3 and big are decoded again and refused.
    std::vector<M> changed = ms;
    for (int i : {1, 3, 5}) changed[static_cast<size_t>(i)].data[100] ^= 1;
    write_framed(f, testpatch::valid_tar(changed));
    CHECK(p->read_file("f1", 1 << 20).value() == datas[1]);
    CHECK(p->read_file("f2", 1 << 20).value() == datas[2]);
    for (const char* name : {"f3", "big"}) {
        auto bad = p->read_file(name, 4 << 20);
        REQUIRE_FALSE(bad.ok());
        CHECK(bad.error().message.find("changed since it was validated") != std::string::npos);
    }
    // Without the budget (every verb but apply), f1 is decoded again too.
    write_framed(f, testpatch::valid_tar(ms));
    auto plain = Patch::open(f);
    REQUIRE(plain.ok());
    write_framed(f, testpatch::valid_tar(changed));
    auto bad = plain->read_file("f1", 1 << 20);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().message.find("changed since it was validated") != std::string::npos);
}
