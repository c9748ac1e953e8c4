// LEB128 varints (7 bits a byte, low first) for the status caches' stored
// forms (snapshot.cc, verdicts.cc): their counts, sizes and times were
// fixed 8-byte fields, most of them zero bytes (docs/performance.md,
// "Status: the two cache files at half their size").
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace capture {

// At p (room for 10 bytes); returns the end.
inline char* varint_at(char* p, uint64_t v) {
    for (; v >= 0x80; v >>= 7) *p++ = static_cast<char>((v & 0x7f) | 0x80);
    *p++ = static_cast<char>(v);
    return p;
}

inline size_t varint_len(uint64_t v) {
    size_t n = 1;
    for (; v >= 0x80; v >>= 7) n++;
    return n;
}

inline void put_varint(std::string* out, uint64_t v) {
    char b[10];
    out->append(b, static_cast<size_t>(varint_at(b, v) - b));
}

// Refused when torn, longer than 64 bits, or not in its shortest form (a
// trailing zero byte): each value has one encoding.
inline bool get_varint(std::string_view* in, uint64_t* v) {
    // Most of the caches' numbers (flags, modes, counts, small sizes) are one byte.
    if (!in->empty() && static_cast<unsigned char>((*in)[0]) < 0x80) {
        *v = static_cast<unsigned char>((*in)[0]);
        in->remove_prefix(1);
        return true;
    }
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 64 && !in->empty(); shift += 7) {
        auto b = static_cast<unsigned char>((*in)[0]);
        in->remove_prefix(1);
        if (shift == 63 && b > 1) return false;
        r |= static_cast<uint64_t>(b & 0x7f) << shift;
        if (b < 0x80) {
            if (b == 0 && shift > 0) return false;
            *v = r;
            return true;
        }
    }
    return false;
}

// A time in ns (~2^61 now: 9 bytes as a varint) as 8 bytes, little-endian.
inline char* fixed64_at(char* p, uint64_t v) {
    for (int i = 0; i < 8; i++) p[i] = static_cast<char>(v >> (8 * i));
    return p + 8;
}

inline bool get_fixed64(std::string_view* in, uint64_t* v) {
    if (in->size() < 8) return false;
    uint64_t r = 0;
    for (int i = 0; i < 8; i++) r |= static_cast<uint64_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
    in->remove_prefix(8);
    *v = r;
    return true;
}

// A difference modulo 2^64 (a ctime's from its mtime: most often 0) as a
// small number whichever its sign: 0, -1, 1, -2, ... as 0, 1, 2, 3, ...
inline uint64_t zigzag(uint64_t d) { return (d << 1) ^ (0 - (d >> 63)); }
inline uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

}  // namespace capture
