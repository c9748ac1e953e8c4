// A bounded hand-off of work batches from one producer thread to one
// consumer thread. Staging uses it to let the archive's decompression run
// on one core while the file-creating syscalls run on another (the way
// `tar --zstd` pipes through a separate zstd process). Bounded, so memory
// stays flat however large the patch is.
#pragma once
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

namespace review {

// One unit of work: open entry `tag` (len == 0 and tag != 0), or write
// buf[pos, pos + len) (or ext[0, len), when set) at file offset `off` into
// the entry opened last.
struct HandoffOp {
    const void* tag = nullptr;
    uint64_t off = 0;
    size_t pos = 0, len = 0;
    const char* ext = nullptr;
};

struct HandoffBatch {
    std::vector<HandoffOp> ops;
    std::string buf;
    void clear() {
        ops.clear();
        buf.clear();
    }
};

class Handoff {
public:
    static constexpr size_t kBatchBytes = 512u << 10;
    static constexpr size_t kBatchOps = 256;
    static constexpr size_t kQueued = 3;

    // Producer side.
    void open(const void* tag);
    void write(uint64_t off, const char* data, size_t len);
    // The same, without a copy: data must stay valid until the consumer is done.
    void write_ref(uint64_t off, const char* data, size_t len);
    void close();  // flush, then tell the consumer there is no more
    // Consumer side: false when the producer closed and all was taken.
    bool take(HandoffBatch& out);
    // Either side: stop early (the consumer failed, or the producer did);
    // a stopped hand-off drops what is queued and wakes both sides.
    void stop();
    bool stopped() const;

private:
    void push_if_full();
    void push();
    mutable std::mutex mu_;
    std::condition_variable cv_;
    std::deque<HandoffBatch> queue_;
    std::vector<HandoffBatch> spare_;
    HandoffBatch cur_;
    bool closed_ = false, stopped_ = false;
};

}  // namespace review
