// Which groups of fixed strings occur in a text, in one pass over it: the
// secret rules' prefilter (secrets.cc). The scan looks up the byte pair at
// every other position in a 64 Ki-entry table; each needle is entered there
// under two neighbouring pairs of its own (those least likely in text: fewest
// lowercase letters), so one of them is always seen, and a hit is confirmed
// by a compare. std::string_view::find per needle went over the text ~30
// times, stopping at every common letter. Where the CPU has AVX2, 32 bytes at
// a time are first tested for where a needle may start (its first three
// bytes, by nibble lookups in 8 buckets of needles: a superset of the
// needles' starts, none in hex text), 64 at a time with AVX-512BW, and only
// around blocks that may hold one are pairs looked up in the table.
// Pure.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace review {

class NeedleGroups {
public:
    // groups[g]: the needles of group g (at most 64 groups; needles of 3 bytes or more; shorter ones are never found).
    explicit NeedleGroups(const std::vector<std::vector<std::string>>& groups);
    // Bit g set: some needle of group g occurs in `text`.
    uint64_t present(std::string_view text) const;
    // The same, without the 32-byte blocks' test (the tests compare the two).
    uint64_t present_by_table(std::string_view text) const;
    // The same with the 32-byte blocks' test even where the CPU has AVX-512 (or the table alone without AVX2).
    uint64_t present_by_blocks32(std::string_view text) const;

private:
    struct Needle {
        std::string text;
        size_t at;  // where its byte pair sits in it
        uint64_t bit;
    };
    std::vector<std::vector<Needle>> lists_;  // by slot - 1
    // Byte pair (first | second << 8) -> 1 + index in lists_, or 0. 128 KiB,
    // but a text touches few of its lines (hex: 18 x 18 pairs).
    std::array<uint16_t, 65536> slot_{};
    uint64_t all_ = 0;
    // The blocks' test: the buckets of a needle's first byte by its low nibble
    // [0, 16) and its high nibble [16, 32), then of its second and third byte.
    alignas(16) std::array<uint8_t, 96> nibbles_{};
    size_t longest_ = 0;  // the longest needle
    int blocks_ = 0;      // 2: the CPU has AVX-512BW (blocks of 64), 1: AVX2 (blocks of 32), 0: neither
    uint64_t scan(std::string_view text, int blocks) const;
};

}  // namespace review
