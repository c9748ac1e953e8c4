#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "review/prompt/needles.h"

using review::NeedleGroups;

namespace {

uint64_t naive(const std::vector<std::vector<std::string>>& groups, const std::string& text) {
    uint64_t out = 0;
    for (size_t g = 0; g < groups.size(); g++)
        for (const auto& n : groups[g])
            if (n.size() >= 3 && text.find(n) != std::string::npos) out |= uint64_t{1} << g;
    return out;
}

}  // namespace

TEST_CASE("needles: each group found at the start, the end, an odd and an even offset, or not at all", "[needles]") {
    std::vector<std::vector<std::string>> groups = {{"eyJ"}, {"sk-", "xoxb-"}, {"KEY", "key"}, {"PRIVATE KEY-----"}};
    NeedleGroups ng(groups);
    CHECK(ng.present("") == 0);
    CHECK(ng.present("ey") == 0);
    CHECK(ng.present("eyJ") == 1);
    CHECK(ng.present("aeyJ") == 1);
    CHECK(ng.present("..xoxb-") == 2);
    CHECK(ng.present(".xoxb-.") == 2);
    CHECK(ng.present("a key") == 4);
    CHECK(ng.present("-----BEGIN RSA PRIVATE KEY-----") == (8 | 4));
    CHECK(ng.present("PRIVATE KEY----") == 4);  // one dash short: only KEY
    CHECK(ng.present("sk_ eyj Key xoxa-") == 0);
}

TEST_CASE("needles: on random texts the one pass agrees with a find per needle", "[needles]") {
    // A small alphabet, so that needles and near misses occur often.
    std::vector<std::vector<std::string>> groups = {{"abc"}, {"ba-", "cab_"}, {"a-b", "--a"}, {"ccc", "bcab"}, {"_a_"}};
    NeedleGroups ng(groups);
    std::mt19937 rng(7);
    const char alphabet[] = "abc-_";
    int agreed = 0, found_some = 0;
    for (int t = 0; t < 3000; t++) {
        std::string text(rng() % 24, ' ');
        for (auto& ch : text) ch = alphabet[rng() % 5];
        uint64_t want = naive(groups, text);
        CHECK(ng.present(text) == want);
        agreed += ng.present(text) == want;
        found_some += want != 0;
    }
    CHECK(agreed == 3000);
    CHECK(found_some > 1000);  // the texts did exercise the hits
}

TEST_CASE("needles: on long texts (the 8-byte steps and the tail) the pass agrees with a find per needle",
          "[needles]") {
    // The secret rules' own kind of needles, in text of hex digits and letters.
    std::vector<std::vector<std::string>> groups = {
        {"PRIVATE KEY-----"}, {"AKIA", "ASIA"}, {"ghp_", "gho_"}, {"sk-"}, {"eyJ"}, {"KEY", "key", "token", "secret"}};
    NeedleGroups ng(groups);
    std::mt19937 rng(11);
    const std::string alphabet = "0123456789abcdef \nkeyKEYghp_sk-eyJAKItokensecr";
    int found_some = 0, none = 0;
    for (int t = 0; t < 2000; t++) {
        std::string text(rng() % 300, ' ');
        // Mostly hex, sometimes any of the alphabet (needles and near misses).
        for (auto& ch : text) ch = alphabet[rng() % (rng() % 8 == 0 ? alphabet.size() : 17)];
        if (t % 3 == 0 && !text.empty()) {  // a whole needle at any offset, the end included
            const auto& g = groups[rng() % groups.size()];
            const std::string& nd = g[rng() % g.size()];
            text.insert(rng() % (text.size() + 1), nd);
        }
        uint64_t want = naive(groups, text);
        REQUIRE(ng.present(text) == want);
        REQUIRE(ng.present_by_blocks32(text) == want);
        found_some += want != 0;
        none += want == 0;
    }
    CHECK(found_some > 500);
    CHECK(none > 200);
}

TEST_CASE("needles: the 32-byte blocks' test finds what the table finds, at every offset across blocks", "[needles]") {
    // The secret rules' own needles (first bytes in more than 8 buckets' worth).
    std::vector<std::vector<std::string>> groups = {{"PRIVATE KEY-----"},
                                                    {"AKIA", "ASIA", "ABIA", "ACCA"},
                                                    {"ghp_", "gho_"},
                                                    {"github_pat_"},
                                                    {"xoxb-"},
                                                    {"sk-ant-"},
                                                    {"sk-"},
                                                    {"AIza"},
                                                    {"eyJ"},
                                                    {"KEY", "key", "Token"},
                                                    {"SECRET", "secret"},
                                                    {"PASSWORD", "password"}};
    NeedleGroups ng(groups);
    const std::string hex = "0123456789abcdef";
    for (const auto& group : groups)
        for (const auto& nd : group)
            for (size_t len : {34, 35, 64, 66, 67, 100, 129, 131, 200}) {
                for (size_t at = 0; at + nd.size() <= len; at++) {  // hex around it: only the needle is there
                    std::string text(len, ' ');
                    for (size_t k = 0; k < len; k++) text[k] = hex[(k * 7 + at) % 16];
                    text.replace(at, nd.size(), nd);
                    uint64_t want = naive(groups, text);
                    REQUIRE(want != 0);
                    REQUIRE(ng.present(text) == want);
                    REQUIRE(ng.present_by_blocks32(text) == want);
                    REQUIRE(ng.present_by_table(text) == want);
                }
            }
}

TEST_CASE("needles: on long mixed texts the blocks' test and the table agree with a find per needle", "[needles]") {
    std::vector<std::vector<std::string>> groups = {{"PRIVATE KEY-----"},
                                                    {"AKIA", "ASIA"},
                                                    {"ghp_", "gho_"},
                                                    {"sk-"},
                                                    {"eyJ"},
                                                    {"KEY", "key", "token", "secret", "Secret", "password"}};
    NeedleGroups ng(groups);
    std::mt19937 rng(13);
    // Hex, then code-like text: letters of the needles' first bytes, near misses.
    const std::string alphabet = "0123456789abcdef \nkeyKEYghp_sk-eyJAKItokensecrSPpwd=\"(){};";
    int found_some = 0, none = 0;
    for (int t = 0; t < 1500; t++) {
        std::string text(40 + rng() % 600, ' ');
        size_t pool = t % 2 ? alphabet.size() : 17;
        for (auto& ch : text) ch = alphabet[rng() % (rng() % 16 == 0 ? alphabet.size() : pool)];
        if (t % 4 == 0) {
            const auto& g = groups[rng() % groups.size()];
            const std::string& nd = g[rng() % g.size()];
            text.insert(rng() % (text.size() + 1), nd);
        }
        uint64_t want = naive(groups, text);
        REQUIRE(ng.present(text) == want);
        REQUIRE(ng.present_by_blocks32(text) == want);
        REQUIRE(ng.present_by_table(text) == want);
        found_some += want != 0;
        none += want == 0;
    }
    CHECK(found_some > 300);
    CHECK(none > 300);
}

TEST_CASE("needles: random needle sets (high bytes, longer than a block) agree at block and buffer ends", "[needles]") {
    // attack36: the blocks' test fuzzed against the table and a find per
    // needle: needles of any bytes (their high nibbles too), up to 70 bytes,
    // more first bytes than buckets, placed across each 32-byte block's end
    // and at the text's end.
    std::mt19937 rng(36);
    const std::string alphabet = std::string("aAeK-_0f \n\x80\x9f\xc3\xe2\xff\x01", 16);
    long checked = 0, found_some = 0;
    for (int set = 0; set < 300; set++) {
        std::vector<std::vector<std::string>> groups(1 + rng() % 12);
        for (auto& g : groups) {
            g.resize(1 + rng() % 4);
            for (auto& nd : g) {
                nd.resize(rng() % 5 == 0 ? 33 + rng() % 38 : 3 + rng() % 6);
                for (auto& ch : nd) ch = rng() % 3 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng());
            }
        }
        NeedleGroups ng(groups);
        for (int t = 0; t < 60; t++) {
            std::string text(rng() % 260, ' ');
            for (auto& ch : text) ch = alphabet[rng() % alphabet.size()];
            for (int k = rng() % 4; k > 0; k--) {
                const auto& g = groups[rng() % groups.size()];
                const std::string& nd = g[rng() % g.size()];
                if (nd.size() > text.size()) continue;
                size_t at = rng() % 2 ? (rng() % (text.size() / 32 + 1)) * 32 + rng() % 7 : text.size();
                at = at >= 3 ? at - 3 : 0;  // from 3 before a block's end (or the text's) to 3 after
                at = std::min(at, text.size() - nd.size());
                text.replace(at, nd.size(), nd);
            }
            uint64_t want = naive(groups, text);
            REQUIRE(ng.present_by_table(text) == want);
            REQUIRE(ng.present(text) == want);
            REQUIRE(ng.present_by_blocks32(text) == want);
            checked++;
            found_some += want != 0;
        }
    }
    CHECK(checked == 300 * 60);
    CHECK(found_some > 5000);
}
