#include <cstring>

#include "capture/patch/zframe.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

int zframe(const uint8_t* data, size_t size) {
    const unsigned char* p = data;
    (void)capture::frame_start_problem(p, size);
    if (size >= 5) (void)capture::frame_header_size(p);
    (void)capture::frame_window(p, size);
    if (size >= 3) (void)capture::block_header(p);
    capture::ReadAt read = [&](uint64_t off, unsigned char* out, size_t n) {
        if (off > size || n > size - off) return false;
        std::memcpy(out, p + off, n);
        return true;
    };
    // Walk frame after frame, as the reader does: each end must move forward.
    uint64_t off = 0;
    for (int i = 0; i < 64 && off < size; i++) {
        auto end = capture::frame_end(read, off, size);
        if (!end) break;
        if (*end <= off || *end > size) __builtin_trap();
        off = *end;
    }
    return 0;
}

}  // namespace fuzz
