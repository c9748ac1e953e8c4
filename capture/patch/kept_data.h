// Decoded file data kept from a patch's validation for its second pass
// (Patch::read_data): the small dense files, up to a budget, back to back
// in one anonymous mapping (huge pages where the kernel gives them). apply
// asks for it (Limits::keep_decoded): its staging then writes what
// validation decoded and fingerprinted, instead of decoding and
// fingerprinting the stream again (docs/design.md "Apply reads the patch
// once for small files").
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>

namespace capture {

class KeptData {
public:
    // A file over this many bytes is read again in the second pass: a big
    // file would spend the budget (and the memory) on one member.
    static constexpr uint64_t kMemberMax = uint64_t{1} << 20;
    // What apply keeps: 10,000 files of 4 KiB fit; a bigger patch's other
    // files are decoded again, so memory stays bounded whatever its size.
    static constexpr uint64_t kApplyBudget = uint64_t{48} << 20;

    explicit KeptData(uint64_t budget = 0);
    KeptData(KeptData&& o) noexcept;
    KeptData& operator=(KeptData&& o) noexcept;
    KeptData(const KeptData&) = delete;
    KeptData& operator=(const KeptData&) = delete;
    ~KeptData();

    // Room for a member of n bytes (1..kMemberMax): where it starts, or -1
    // (no budget, too big, the budget spent, or no mapping to be had).
    int64_t reserve(uint64_t n);
    char* at(int64_t off) { return base_ + off; }
    const char* at(int64_t off) const { return base_ + off; }
    // Nothing more will be reserved: the thread faulting pages in ahead stops.
    void settle();

private:
    struct Ahead;  // faults pages in ahead of reserve (kept_data.cc)
    void release();
    char* base_ = nullptr;
    uint64_t budget_ = 0;
    uint64_t used_ = 0;
    uint64_t asked_ = 0;  // what the Ahead thread was asked to fault in
    std::unique_ptr<Ahead> ahead_;
};

}  // namespace capture
