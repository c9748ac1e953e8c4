#include "review/prompt/needles.h"

#include <cstring>

namespace review {

namespace {

int lower(unsigned char ch) { return ch >= 'a' && ch <= 'z' ? 1 : 0; }

}  // namespace

NeedleGroups::NeedleGroups(const std::vector<std::vector<std::string>>& groups) {
    for (size_t g = 0; g < groups.size() && g < 64; g++) {
        for (const auto& n : groups[g]) {
            if (n.size() < 3) continue;
            // Two neighbouring pairs with the fewest lowercase letters (the
            // last of equals): the scan looks at every other position, and
            // one of them always starts at one.
            auto score = [&](size_t i) {
                return lower(static_cast<unsigned char>(n[i])) + lower(static_cast<unsigned char>(n[i + 1]));
            };
            size_t best = 0;
            int least = 5;
            for (size_t i = 0; i + 2 < n.size(); i++)
                if (score(i) + score(i + 1) <= least) best = i, least = score(i) + score(i + 1);
            for (size_t at : {best, best + 1}) {
                unsigned pair = static_cast<unsigned char>(n[at]) | static_cast<unsigned char>(n[at + 1]) << 8;
                if (slot_[pair] == 0) {
                    lists_.emplace_back();
                    slot_[pair] = static_cast<uint16_t>(lists_.size());
                }
                lists_[slot_[pair] - 1].push_back({n, at, uint64_t{1} << g});
            }
            all_ |= uint64_t{1} << g;
        }
    }
}

uint64_t NeedleGroups::present(std::string_view text) const {
    uint64_t found = 0;
    const auto* p = reinterpret_cast<const unsigned char*>(text.data());
    size_t n = text.size();
    const uint16_t* slot = slot_.data();
    // The pair at i starts a list: confirm its needles. True: all found.
    auto confirm = [&](size_t i) {
        unsigned pair = p[i] | p[i + 1] << 8;
        if (!slot[pair]) return false;
        for (const Needle& nd : lists_[slot[pair] - 1]) {
            if ((found & nd.bit) || i < nd.at) continue;
            size_t start = i - nd.at;
            if (start + nd.text.size() <= n && std::memcmp(p + start, nd.text.data(), nd.text.size()) == 0)
                found |= nd.bit;
        }
        return found == all_;
    };
    size_t i = 0;
    // Eight bytes at a time (four pairs, little-endian), then the rest. The
    // slot table itself is the filter: one load per pair (the bit table it
    // replaced, read with a shift and a mask, took twice as long on hex text).
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        std::memcpy(&w, p + i, 8);
        if (!(slot[w & 0xffff] | slot[(w >> 16) & 0xffff] | slot[(w >> 32) & 0xffff] | slot[w >> 48])) continue;
        for (size_t k = i; k < i + 8; k += 2)
            if (confirm(k)) return found;
    }
    for (; i + 1 < n; i += 2)
        if (confirm(i)) return found;
    return found;
}

}  // namespace review
