// Decoded data kept from validation (Limits::keep_decoded, apply's): the
// small dense files within the budget are read back from memory as they were
// validated; the others are decoded and checked again as before.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <fstream>
#include <set>
#include <thread>

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

// This process's threads (their ids in /proc/self/task).
std::set<std::string> threads() {
    std::set<std::string> out;
    DIR* d = ::opendir("/proc/self/task");
    if (!d) return out;
    while (dirent* e = ::readdir(d))
        if (e->d_name[0] != '.') out.insert(e->d_name);
    ::closedir(d);
    return out;
}

// A thread's state letter (R running, S sleeping, ...), from /proc.
char thread_state(const std::string& tid) {
    std::ifstream f("/proc/self/task/" + tid + "/stat");
    std::string line;
    std::getline(f, line);
    size_t paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
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

TEST_CASE("capture kept data: the budget spent, the thread faulting pages in ahead waits (attack51: it spun)") {
    // With the budget nearly spent (more than 44 of apply's 48 MiB), the
    // thread was asked for pages past the mapping's end: it faulted in
    // nothing and asked again, a CPU busy for the rest of validation.
    auto before = threads();
    capture::KeptData k(capture::KeptData::kApplyBudget);
    for (uint64_t i = 0; i < capture::KeptData::kApplyBudget / capture::KeptData::kMemberMax; i++) {
        int64_t off = k.reserve(capture::KeptData::kMemberMax);
        REQUIRE(off >= 0);
        k.at(off)[0] = 'x';
    }
    CHECK(k.reserve(1) == -1);  // the budget is spent
    std::set<std::string> ahead;
    for (const auto& t : threads())
        if (!before.count(t)) ahead.insert(t);
    if (ahead.empty()) return;  // no thread to be had (or madvise unsupported): nothing runs ahead
    // It sleeps on its condition once the whole mapping is faulted in: waited for, with a bound.
    bool asleep = false;
    for (int i = 0; i < 1000 && !asleep; i++) {
        asleep = true;
        for (const auto& t : ahead) {
            char st = thread_state(t);
            if (st != 'S' && st != '?') asleep = false;  // '?': gone (madvise unsupported: it returned)
        }
        if (!asleep) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(asleep);
}
