#include "capture/zframe.h"

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
    for (;;) {
        unsigned char b[3];
        if (pos > size || size - pos < 3 || !read(pos, b, 3)) return std::nullopt;
        BlockHeader bh = block_header(b);
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
