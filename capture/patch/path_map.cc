#include "capture/patch/path_map.h"

#include <sys/random.h>
#include <xxhash.h>

#include <cstring>

namespace capture {

namespace {

constexpr size_t kBlock = 64 << 10;  // owned keys are packed into blocks of this size

// Seeded once per process at random: the paths come from a patch its
// author may have made to collide (linear probing would go quadratic).
uint64_t process_seed() {
    uint64_t s = 0;
    if (::getrandom(&s, sizeof s, GRND_NONBLOCK) != sizeof s) s = reinterpret_cast<uintptr_t>(&s);  // ASLR at least
    return s;
}

uint64_t hash_of(std::string_view key) {
    static const uint64_t seed = process_seed();
    return XXH3_64bits_withSeed(key.data(), key.size(), seed);
}

// Room for `n` paths at no more than half full, a power of two.
size_t slots_for(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
}

uint64_t tag_of(uint64_t h) { return h >> 32; }

}  // namespace

PathMap::PathMap(size_t expected, bool own_keys) : slots_(slots_for(expected)), own_(own_keys) {
    entries_.reserve(expected);
}

size_t PathMap::probe(std::string_view key, uint64_t h) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
        uint64_t s = slots_[i];
        if (s == 0) return i;
        if ((s >> 32) != tag_of(h)) continue;
        const Entry& e = entries_[(s & 0xffffffffu) - 1];
        if (e.len == key.size() && (key.empty() || std::memcmp(e.key, key.data(), key.size()) == 0)) return i;
    }
}

uint32_t* PathMap::find(std::string_view key) {
    uint64_t s = slots_[probe(key, hash_of(key))];
    return s ? &entries_[(s & 0xffffffffu) - 1].value : nullptr;
}

const uint32_t* PathMap::find(std::string_view key) const { return const_cast<PathMap*>(this)->find(key); }

uint32_t* PathMap::get(std::string_view key, uint32_t init, bool* fresh) {
    uint64_t h = hash_of(key);
    size_t i = probe(key, h);
    if (fresh) *fresh = slots_[i] == 0;
    if (slots_[i]) return &entries_[(slots_[i] & 0xffffffffu) - 1].value;
    if (2 * (entries_.size() + 1) > slots_.size()) {
        rehash(slots_.size() * 2);
        i = probe(key, h);
    }
    std::string_view k = own_ ? keep(key) : key;
    entries_.push_back({k.data(), k.size(), init});
    slots_[i] = (tag_of(h) << 32) | entries_.size();
    return &entries_.back().value;
}

void PathMap::reserve(size_t n) {
    entries_.reserve(n);
    if (slots_for(n) > slots_.size()) rehash(slots_for(n));
}

void PathMap::rehash(size_t slots) {
    slots_.assign(slots, 0);
    size_t mask = slots - 1;
    for (size_t k = 0; k < entries_.size(); k++) {
        uint64_t h = hash_of({entries_[k].key, entries_[k].len});
        size_t i = static_cast<size_t>(h) & mask;
        while (slots_[i]) i = (i + 1) & mask;
        slots_[i] = (tag_of(h) << 32) | (k + 1);
    }
}

std::string_view PathMap::keep(std::string_view key) {
    if (key.size() > kBlock / 4) {
        blocks_.emplace_back(new char[key.size()]);
        std::memcpy(blocks_.back().get(), key.data(), key.size());
        return {blocks_.back().get(), key.size()};
    }
    if (key.size() > block_left_) {
        blocks_.emplace_back(new char[kBlock]);
        block_at_ = blocks_.back().get();
        block_left_ = kBlock;
    }
    char* at = block_at_;
    if (!key.empty()) std::memcpy(at, key.data(), key.size());
    block_at_ += key.size();
    block_left_ -= key.size();
    return {at, key.size()};
}

}  // namespace capture
