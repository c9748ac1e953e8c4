#include "capture/patch/path_map.h"

#include <xxhash.h>

#include <cstring>

namespace capture {

namespace {

constexpr size_t kBlock = 64 << 10;  // owned keys are packed into blocks of this size

uint64_t hash_of(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

// Room for `n` paths at no more than half full, a power of two.
size_t slots_for(size_t n) {
    size_t c = 16;
    while (c < 2 * n) c *= 2;
    return c;
}

}  // namespace

PathMap::PathMap(size_t expected, bool own_keys) : slots_(slots_for(expected)), own_(own_keys) {}

size_t PathMap::probe(std::string_view key, uint64_t h) const {
    size_t mask = slots_.size() - 1;
    for (size_t i = static_cast<size_t>(h) & mask;; i = (i + 1) & mask) {
        const Slot& s = slots_[i];
        if (!s.key) return i;
        if (s.hash == h && s.len == key.size() && (key.empty() || std::memcmp(s.key, key.data(), key.size()) == 0))
            return i;
    }
}

uint32_t* PathMap::find(std::string_view key) {
    Slot& s = slots_[probe(key, hash_of(key))];
    return s.key ? &s.value : nullptr;
}

const uint32_t* PathMap::find(std::string_view key) const { return const_cast<PathMap*>(this)->find(key); }

uint32_t* PathMap::get(std::string_view key, uint32_t init, bool* fresh) {
    uint64_t h = hash_of(key);
    size_t i = probe(key, h);
    if (fresh) *fresh = !slots_[i].key;
    if (slots_[i].key) return &slots_[i].value;
    if (2 * (used_ + 1) > slots_.size()) {
        rehash(slots_.size() * 2);
        i = probe(key, h);
    }
    std::string_view k = own_ ? keep(key) : key;
    // An empty key still needs a non-null pointer: null marks a free slot.
    slots_[i] = {k.data() ? k.data() : "", k.size(), h, init};
    used_++;
    return &slots_[i].value;
}

void PathMap::reserve(size_t n) {
    if (slots_for(n) > slots_.size()) rehash(slots_for(n));
}

void PathMap::rehash(size_t slots) {
    std::vector<Slot> old(slots);
    old.swap(slots_);
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
        if (!s.key) continue;
        size_t i = static_cast<size_t>(s.hash) & mask;
        while (slots_[i].key) i = (i + 1) & mask;
        slots_[i] = s;
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
    std::memcpy(at, key.data(), key.size());
    block_at_ += key.size();
    block_left_ -= key.size();
    return {at, key.size()};
}

}  // namespace capture
