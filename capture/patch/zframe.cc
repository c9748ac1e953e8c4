#include "capture/patch/zframe.h"

#include <algorithm>

namespace capture {

namespace {
constexpr uint32_t kMagic = 0xFD2FB528u;
uint32_t le32(const unsigned char* p) {
    return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24);
}
}  // namespace

std::string frame_start_problem(const unsigned char* p, size_t n) {
    if (n < 5) return "the patch is truncated (incomplete zstd frame header)";
    uint32_t magic = le32(p);
    if ((magic & 0xFFFFFFF0u) == 0x184D2A50u)
        return "the patch holds a skippable zstd frame, which layover patches never contain";
    if (magic != kMagic) return "not a zstd-compressed patch (bad frame magic)";
    // Frame_Header_Descriptor bit 2: Content_Checksum_flag.
    if (!(p[4] & 0x04)) return "the patch's zstd frames carry no checksum; layover patches always have one";
    return "";
}

size_t frame_header_size(const unsigned char* p) {
    unsigned fhd = p[4];
    if (fhd & 0x08) return 0;  // the reserved bit
    bool single = fhd & 0x20;
    static constexpr size_t kDid[4] = {0, 1, 2, 4};
    static constexpr size_t kFcs[4] = {0, 2, 4, 8};
    size_t fcs = (fhd >> 6) == 0 ? (single ? 1 : 0) : kFcs[fhd >> 6];
    return 4 + 1 + (single ? 0 : 1) + kDid[fhd & 3] + fcs;
}

std::optional<uint64_t> frame_window(const unsigned char* p, size_t n) {
    if (n < 5) return std::nullopt;
    size_t hs = frame_header_size(p);
    if (hs == 0 || n < hs) return std::nullopt;
    unsigned fhd = p[4];
    if (!(fhd & 0x20)) {  // Window_Descriptor: 2^(10+exponent) plus mantissa eighths
        unsigned wd = p[5];
        uint64_t base = uint64_t{1} << (10 + (wd >> 3));
        return base + base / 8 * (wd & 7);
    }
    // Single segment: the window is the whole content, Frame_Content_Size.
    static constexpr size_t kDid[4] = {0, 1, 2, 4};
    const unsigned char* f = p + 5 + kDid[fhd & 3];
    switch (fhd >> 6) {
        case 0: return f[0];
        case 1: return (f[0] | (f[1] << 8)) + 256u;
        case 2: return le32(f);
        default: return le32(f) | (static_cast<uint64_t>(le32(f + 4)) << 32);
    }
}

BlockHeader block_header(const unsigned char* p) {
    uint32_t v = p[0] | (p[1] << 8) | (static_cast<uint32_t>(p[2]) << 16);
    BlockHeader b;
    b.last = v & 1;
    b.type = (v >> 1) & 3;
    b.size = v >> 3;
    return b;
}

std::optional<uint64_t> frame_end(const ReadAt& read, uint64_t off, uint64_t size) {
    unsigned char h[5];
    if (size < off || size - off < 5 || !read(off, h, 5)) return std::nullopt;
    if (!frame_start_problem(h, 5).empty()) return std::nullopt;
    size_t hs = frame_header_size(h);
    if (hs == 0) return std::nullopt;
    uint64_t pos = off + hs;
    // Block headers are read through a small window: one read per block
    // for real frames, and not one per 3 bytes for a frame of empty blocks.
    unsigned char win[4096];
    uint64_t win_off = 0;
    size_t win_len = 0;
    for (;;) {
        if (pos > size || size - pos < 3) return std::nullopt;
        if (pos < win_off || pos - win_off + 3 > win_len) {
            size_t want = static_cast<size_t>(std::min<uint64_t>(sizeof win, size - pos));
            if (!read(pos, win, want)) return std::nullopt;
            win_off = pos;
            win_len = want;
        }
        BlockHeader bh = block_header(win + (pos - win_off));
        if (bh.type == 3) return std::nullopt;
        pos += 3;
        if (size - pos < bh.stored()) return std::nullopt;
        pos += bh.stored();
        if (bh.last) break;
    }
    if (size - pos < 4) return std::nullopt;  // the checksum every layover frame has
    return pos + 4;
}

}  // namespace capture
