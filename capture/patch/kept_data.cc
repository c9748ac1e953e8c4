#include "capture/patch/kept_data.h"

#include <sys/mman.h>

#include <utility>

namespace capture {

KeptData::KeptData(uint64_t budget) : budget_(budget) {}

KeptData::KeptData(KeptData&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)), budget_(std::exchange(o.budget_, 0)), used_(std::exchange(o.used_, 0)) {}

KeptData& KeptData::operator=(KeptData&& o) noexcept {
    if (this != &o) {
        KeptData old(std::move(*this));
        base_ = std::exchange(o.base_, nullptr);
        budget_ = std::exchange(o.budget_, 0);
        used_ = std::exchange(o.used_, 0);
    }
    return *this;
}

KeptData::~KeptData() {
    if (base_) ::munmap(base_, budget_);
}

int64_t KeptData::reserve(uint64_t n) {
    if (n == 0 || n > kMemberMax || n > budget_ - used_) return -1;
    if (!base_) {
        // Address space only: pages come as they are written, so what is
        // kept is what is used. Huge pages: a 4 KiB page fault per 4 KiB
        // file cost more than decoding it again did.
        void* p = ::mmap(nullptr, budget_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            budget_ = 0;
            return -1;
        }
        base_ = static_cast<char*>(p);
        ::madvise(base_, budget_, MADV_HUGEPAGE);
    }
    auto off = static_cast<int64_t>(used_);
    used_ += n;
    return off;
}

}  // namespace capture
