// Which groups of fixed strings occur in a text, in one pass over it: the
// secret rules' prefilter (secrets.cc). The scan looks up the byte pair at
// every other position in a 64 Ki-entry table; each needle is entered there
// under two neighbouring pairs of its own (those least likely in text: fewest
// lowercase letters), so one of them is always seen, and a hit is confirmed
// by a compare. std::string_view::find per needle went over the text ~30
// times, stopping at every common letter.
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
};

}  // namespace review
