// A flat hash map from paths (string views) to a small value, for the
// patch reader's per-member checks: one array of slots, no allocation per
// path (the node-based sets and maps of copied strings it replaces took
// ~20% of validating a 10,000-file patch, their destruction included;
// docs/performance.md, "Apply, third pass").
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

namespace capture {

class PathMap {
public:
    // expected: how many paths it will likely hold (it grows past that).
    // own_keys: copy each new key into the map's own storage; otherwise the
    // caller keeps every key's bytes alive as long as the map.
    explicit PathMap(size_t expected = 0, bool own_keys = false);

    // The value of key, or null. A value pointer is valid until the next get().
    uint32_t* find(std::string_view key);
    const uint32_t* find(std::string_view key) const;
    // The value of key, made `init` when new; *fresh: whether it was new.
    uint32_t* get(std::string_view key, uint32_t init = 0, bool* fresh = nullptr);
    // Room for n paths without growing again.
    void reserve(size_t n);
    size_t size() const { return entries_.size(); }

private:
    struct Entry {
        const char* key;
        size_t len;
        uint32_t value;
    };
    // The slot of key: its entry, or the empty slot where it would go.
    size_t probe(std::string_view key, uint64_t h) const;
    void rehash(size_t slots);
    std::string_view keep(std::string_view key);

    // Entries in the order added (a path's parent, looked up next, was
    // usually added just before it: in cache), and a compact index of
    // them: (hash's top 32 bits << 32) | (entry + 1), 0 when free.
    std::vector<Entry> entries_;
    std::vector<uint64_t> slots_;
    bool own_ = false;
    std::vector<std::unique_ptr<char[]>> blocks_;  // owned keys, packed
    size_t block_left_ = 0;
    char* block_at_ = nullptr;
};

}  // namespace capture
