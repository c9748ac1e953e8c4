#include "review/apply/handoff.h"

#include <utility>

namespace review {

void Handoff::open(const void* tag) {
    cur_.ops.push_back({tag, 0, 0, 0});
    push_if_full();
}

void Handoff::write(uint64_t off, const char* data, size_t len) {
    if (len == 0) return;
    // Sized once (a batch ends at kBatchBytes, plus the write that crossed it):
    // growing by doubling would copy and touch twice the memory.
    if (cur_.buf.capacity() < kBatchBytes) cur_.buf.reserve(kBatchBytes + len);
    cur_.ops.push_back({nullptr, off, cur_.buf.size(), len});
    cur_.buf.append(data, len);
    push_if_full();
}

void Handoff::write_ref(uint64_t off, const char* data, size_t len) {
    if (len == 0) return;
    cur_.ops.push_back({nullptr, off, 0, len, data});
    push_if_full();
}

void Handoff::close() {
    push();
    std::lock_guard<std::mutex> l(mu_);
    closed_ = true;
    cv_.notify_all();
}

void Handoff::push_if_full() {
    if (cur_.buf.size() >= kBatchBytes || cur_.ops.size() >= kBatchOps) push();
}

void Handoff::push() {
    if (cur_.ops.empty()) return;
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return stopped_ || queue_.size() < kQueued; });
    if (stopped_) {
        cur_.clear();
        return;
    }
    queue_.push_back(std::move(cur_));
    cur_ = HandoffBatch{};
    if (!spare_.empty()) {
        cur_ = std::move(spare_.back());  // reuse a drained batch's buffers
        spare_.pop_back();
    }
    cv_.notify_all();
}

bool Handoff::take(HandoffBatch& out) {
    std::unique_lock<std::mutex> l(mu_);
    if (!out.ops.empty() || out.buf.capacity() > 0) {
        out.clear();
        if (spare_.size() < 2) spare_.push_back(std::move(out));
        out = HandoffBatch{};
    }
    cv_.wait(l, [&] { return stopped_ || closed_ || !queue_.empty(); });
    if (stopped_ || queue_.empty()) return false;
    out = std::move(queue_.front());
    queue_.pop_front();
    cv_.notify_all();
    return true;
}

void Handoff::stop() {
    std::lock_guard<std::mutex> l(mu_);
    stopped_ = true;
    queue_.clear();
    cv_.notify_all();
}

bool Handoff::stopped() const {
    std::lock_guard<std::mutex> l(mu_);
    return stopped_;
}

}  // namespace review
