#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "review/diff/algo.h"

using review::diff_lines;
using review::split_lines;

namespace {

// Lines kept on each side must be the same sequence: a valid common subsequence.
size_t check_common(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b,
                    const review::LineDiff& d) {
    std::vector<std::string_view> ka, kb;
    for (size_t i = 0; i < a.size(); i++)
        if (!d.del[i]) ka.push_back(a[i]);
    for (size_t j = 0; j < b.size(); j++)
        if (!d.ins[j]) kb.push_back(b[j]);
    REQUIRE(ka == kb);
    return ka.size();
}

size_t lcs_len(const std::vector<std::string_view>& a, const std::vector<std::string_view>& b) {
    std::vector<std::vector<size_t>> t(a.size() + 1, std::vector<size_t>(b.size() + 1, 0));
    for (size_t i = a.size(); i-- > 0;)
        for (size_t j = b.size(); j-- > 0;)
            t[i][j] = a[i] == b[j] ? t[i + 1][j + 1] + 1 : std::max(t[i + 1][j], t[i][j + 1]);
    return t[0][0];
}

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (auto& x : v) s += x + "\n";
    return s;
}

}  // namespace

TEST_CASE("review diff: split_lines keeps terminators and a last partial line") {
    CHECK(split_lines("").empty());
    auto l = split_lines("a\nb\r\nc");
    REQUIRE(l.size() == 3);
    CHECK(l[0] == "a\n");
    CHECK(l[1] == "b\r\n");
    CHECK(l[2] == "c");
    CHECK(split_lines("\n\n").size() == 2);
}

TEST_CASE("review diff: empty inputs") {
    auto e = split_lines("");
    auto x = split_lines("x\ny\n");
    auto d = diff_lines(e, e);
    CHECK(d.del.empty());
    CHECK(d.ins.empty());
    d = diff_lines(e, x);
    CHECK(d.ins == std::vector<char>{1, 1});
    d = diff_lines(x, e);
    CHECK(d.del == std::vector<char>{1, 1});
    CHECK(review::groups_of(d).size() == 1);
}

TEST_CASE("review diff: a missing trailing newline makes the last line differ") {
    auto a = split_lines("one\ntwo\n");
    auto b = split_lines("one\ntwo");
    auto d = diff_lines(a, b);
    CHECK(d.del == std::vector<char>{0, 1});
    CHECK(d.ins == std::vector<char>{0, 1});
}

TEST_CASE("review diff: CRLF lines differ from LF lines") {
    auto a = split_lines("a\r\nb\r\nc\r\n");
    auto b = split_lines("a\r\nb\nc\r\n");
    auto d = diff_lines(a, b);
    CHECK(d.del == std::vector<char>{0, 1, 0});
    CHECK(d.ins == std::vector<char>{0, 1, 0});
    auto g = review::groups_of(d);
    REQUIRE(g.size() == 1);
    CHECK(g[0].a0 == 1);
    CHECK(g[0].a1 == 2);
    CHECK(g[0].b0 == 1);
    CHECK(g[0].b1 == 2);
}

TEST_CASE("review diff: result is a longest common subsequence on random inputs") {
    std::mt19937 rng(42);
    for (int round = 0; round < 300; round++) {
        std::vector<std::string> va, vb;
        size_t n = rng() % 40, m = rng() % 40;
        unsigned alpha = 2 + rng() % 6;
        for (size_t i = 0; i < n; i++) va.push_back(std::string(1, static_cast<char>('a' + rng() % alpha)));
        for (size_t i = 0; i < m; i++) vb.push_back(std::string(1, static_cast<char>('a' + rng() % alpha)));
        std::string sa = join(va), sb = join(vb);
        auto a = split_lines(sa), b = split_lines(sb);
        auto d = diff_lines(a, b);
        CHECK(check_common(a, b, d) == lcs_len(a, b));
    }
}

TEST_CASE("review diff: a tiny cost cap still gives a valid (coarser) diff") {
    std::mt19937 rng(7);
    for (int round = 0; round < 200; round++) {
        std::vector<std::string> va, vb;
        for (size_t i = 0, n = rng() % 60; i < n; i++) va.push_back(std::to_string(rng() % 5));
        for (size_t i = 0, n = rng() % 60; i < n; i++) vb.push_back(std::to_string(rng() % 5));
        std::string sa = join(va), sb = join(vb);
        auto a = split_lines(sa), b = split_lines(sb);
        review::DiffTuning t;
        t.max_cost = 1;
        auto d = diff_lines(a, b, t);
        check_common(a, b, d);
    }
}

TEST_CASE("review diff: 200k lines with a few edits take linear work") {
    std::vector<std::string> va;
    for (int i = 0; i < 200000; i++) va.push_back("line " + std::to_string(i));
    auto vb = va;
    vb[10] = "changed";
    vb.erase(vb.begin() + 50000);
    vb.insert(vb.begin() + 120000, "inserted");
    vb[199990] = "changed too";
    std::string sa = join(va), sb = join(vb);
    auto a = split_lines(sa), b = split_lines(sb);
    uint64_t work = 0;
    review::DiffTuning t;
    t.work = &work;
    auto d = diff_lines(a, b, t);
    CHECK(check_common(a, b, d) == 200000 - 3);
    CHECK(work < 20 * (a.size() + b.size()));
    CHECK(review::groups_of(d).size() == 4);
}

TEST_CASE("review diff: a pathological 200k-line input is bounded by the cost cap") {
    // Two interleaved alphabets with little common structure: the minimal
    // diff costs O(N*D), the capped one stays near O(N*sqrt(N)).
    std::mt19937 rng(1);
    std::vector<std::string> va, vb;
    for (int i = 0; i < 200000; i++) va.push_back(std::to_string(rng() % 4));
    for (int i = 0; i < 200000; i++) vb.push_back(std::to_string(rng() % 4));
    std::string sa = join(va), sb = join(vb);
    auto a = split_lines(sa), b = split_lines(sb);
    uint64_t work = 0;
    review::DiffTuning t;
    t.work = &work;
    auto d = diff_lines(a, b, t);
    check_common(a, b, d);
    // N*D would be ~4e10; the cap keeps it orders of magnitude below.
    CHECK(work < 3'000'000'000ull);
}
