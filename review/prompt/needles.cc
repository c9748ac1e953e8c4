#include "review/prompt/needles.h"

#include <algorithm>
#include <cstring>
#include <map>

#if defined(__x86_64__)
#include <immintrin.h>
#define LAYOVER_NEEDLE_BLOCKS 1
#endif

namespace review {

namespace {

int lower(unsigned char ch) { return ch >= 'a' && ch <= 'z' ? 1 : 0; }

#ifdef LAYOVER_NEEDLE_BLOCKS
// The first block at or after `i` (stepping 32) where a needle may start, or
// the first whose three bytes run past `n` (then i + 34 > n). tab: six nibble
// tables of 16 bytes (the buckets of each of a needle's first three bytes by
// its low, then its high nibble): a block passes when, at some position, the
// three bytes share a bucket.
__attribute__((target("avx2"))) size_t next_block(const unsigned char* p, size_t i, size_t n, const uint8_t* tab) {
    const auto* t = reinterpret_cast<const __m128i*>(tab);
    const __m256i lo0 = _mm256_broadcastsi128_si256(_mm_load_si128(t)),
                  hi0 = _mm256_broadcastsi128_si256(_mm_load_si128(t + 1)),
                  lo1 = _mm256_broadcastsi128_si256(_mm_load_si128(t + 2)),
                  hi1 = _mm256_broadcastsi128_si256(_mm_load_si128(t + 3)),
                  lo2 = _mm256_broadcastsi128_si256(_mm_load_si128(t + 4)),
                  hi2 = _mm256_broadcastsi128_si256(_mm_load_si128(t + 5));
    const __m256i nib = _mm256_set1_epi8(0x0f);
// The buckets of the bytes at p + i + K, by their low nibble AND by their high one.
#define LAYOVER_BUCKETS(K)                                                    \
    _mm256_and_si256(_mm256_shuffle_epi8(lo##K, _mm256_and_si256(v##K, nib)), \
                     _mm256_shuffle_epi8(hi##K, _mm256_and_si256(_mm256_srli_epi16(v##K, 4), nib)))
    for (; i + 34 <= n; i += 32) {
        __m256i v0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i));
        __m256i v1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 1));
        __m256i v2 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 2));
        __m256i all = _mm256_and_si256(_mm256_and_si256(LAYOVER_BUCKETS(0), LAYOVER_BUCKETS(1)), LAYOVER_BUCKETS(2));
        if (!_mm256_testz_si256(all, all)) return i;
    }
#undef LAYOVER_BUCKETS
    return i;
}

// The same test 64 bytes at a time where the CPU has AVX-512BW (1.6x the
// AVX2 loop on hex text): a block of 64 that passes returns its first half
// when that half passes, else its second; the last bytes go to the AVX2 loop.
__attribute__((target("avx512bw"))) size_t next_block64(const unsigned char* p, size_t i, size_t n,
                                                        const uint8_t* tab) {
    const auto* t = reinterpret_cast<const __m128i*>(tab);
    // The zeroing form: g++ 12 warns that the plain one's (unused) source is uninitialized.
#define LAYOVER_WIDE(q) _mm512_maskz_broadcast_i32x4(0xffff, _mm_load_si128(q))
    const __m512i lo0 = LAYOVER_WIDE(t), hi0 = LAYOVER_WIDE(t + 1), lo1 = LAYOVER_WIDE(t + 2),
                  hi1 = LAYOVER_WIDE(t + 3), lo2 = LAYOVER_WIDE(t + 4), hi2 = LAYOVER_WIDE(t + 5);
    const __m512i nib = _mm512_set1_epi8(0x0f);
#define LAYOVER_BUCKETS64(K)                                                  \
    _mm512_and_si512(_mm512_shuffle_epi8(lo##K, _mm512_and_si512(v##K, nib)), \
                     _mm512_shuffle_epi8(hi##K, _mm512_and_si512(_mm512_srli_epi16(v##K, 4), nib)))
    for (; i + 66 <= n; i += 64) {
        __m512i v0 = _mm512_loadu_si512(p + i), v1 = _mm512_loadu_si512(p + i + 1), v2 = _mm512_loadu_si512(p + i + 2);
        __m512i all =
            _mm512_and_si512(_mm512_and_si512(LAYOVER_BUCKETS64(0), LAYOVER_BUCKETS64(1)), LAYOVER_BUCKETS64(2));
        uint64_t hit = _mm512_test_epi8_mask(all, all);
        if (hit) return (hit & 0xffffffffu) ? i : i + 32;
    }
#undef LAYOVER_BUCKETS64
#undef LAYOVER_WIDE
    return next_block(p, i, n, tab);
}
#endif

}  // namespace

NeedleGroups::NeedleGroups(const std::vector<std::vector<std::string>>& groups) {
    // The blocks' test: a needle's bucket by its first byte, those in byte
    // order in turn over the 8 (so that 'e' and 'c'... of hex text rarely
    // share one with a letter beyond 'f'; in the order seen, 3% of the blocks
    // of hex text passed, in byte order none).
    std::map<unsigned char, int> bucket;
    for (const auto& group : groups)
        for (const auto& n : group)
            if (n.size() >= 3) bucket.emplace(static_cast<unsigned char>(n[0]), 0);
    int next = 0;
    for (auto& [ch, b] : bucket) b = next++ % 8;
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
            auto first = static_cast<unsigned char>(n[0]);
            auto bit = static_cast<uint8_t>(1u << bucket[first]);
            for (size_t k = 0; k < 3; k++) {
                auto ch = static_cast<unsigned char>(n[k]);
                nibbles_[32 * k + (ch & 15)] |= bit, nibbles_[32 * k + 16 + (ch >> 4)] |= bit;
            }
            longest_ = std::max(longest_, n.size());
            all_ |= uint64_t{1} << g;
        }
    }
#ifdef LAYOVER_NEEDLE_BLOCKS
    __builtin_cpu_init();
    blocks_ = __builtin_cpu_supports("avx512bw") ? 2 : __builtin_cpu_supports("avx2") ? 1 : 0;
#endif
}

uint64_t NeedleGroups::present(std::string_view text) const { return scan(text, blocks_); }

uint64_t NeedleGroups::present_by_table(std::string_view text) const { return scan(text, 0); }

uint64_t NeedleGroups::present_by_blocks32(std::string_view text) const { return scan(text, blocks_ ? 1 : 0); }

uint64_t NeedleGroups::scan(std::string_view text, [[maybe_unused]] int blocks) const {
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
#ifdef LAYOVER_NEEDLE_BLOCKS
    // Blocks of 32 (i stays even): no needle starts in a block the test
    // passes over. One that starts in a block that passes has its pairs
    // before the block's end + the longest needle: the even positions up to
    // there are confirmed (`done`: those already were). Then the table's
    // loops from where the blocks end.
    if (blocks) {
        size_t done = 0;
        const uint8_t* tab = nibbles_.data();
        while ((i = blocks == 2 ? next_block64(p, i, n, tab) : next_block(p, i, n, tab)) + 34 <= n) {
            for (size_t k = std::max(i, done), end = std::min(i + 32 + longest_, n - 1); k < end; k += 2)
                if (confirm(k)) return found;
            i += 32;
            done = std::min(i + longest_, n - 1) & ~size_t{1};
        }
        i = std::max(i, done);
    }
#endif
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
