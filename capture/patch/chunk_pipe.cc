#include "capture/patch/chunk_pipe.h"

#include "capture/patch/spare_bufs.h"

namespace capture {

ChunkPipe::ChunkPipe(size_t chunks, size_t window, size_t cap)
    : chunks_(chunks), window_(window ? window : 1), cap_(cap) {}

bool ChunkPipe::claim(size_t* k) {
    std::unique_lock<std::mutex> l(mu_);
    taken_.wait(l, [&] { return stop_ || next_ >= chunks_.size() || next_ < taking_ + window_; });
    if (stop_ || next_ >= chunks_.size()) return false;
    *k = next_++;
    return true;
}

bool ChunkPipe::put(size_t k, Piece* piece) {
    std::unique_lock<std::mutex> l(mu_);
    Chunk& c = chunks_[k];
    taken_.wait(l, [&] { return stop_ || c.pending < cap_; });
    if (stop_) return false;
    c.pending += piece->size;
    c.q.push_back(std::move(*piece));
    *piece = Piece();
    bool wake = k == taking_;
    l.unlock();
    if (wake) made_.notify_one();
    return true;
}

void ChunkPipe::done(size_t k) {
    {
        std::lock_guard<std::mutex> l(mu_);
        chunks_[k].done = true;
    }
    made_.notify_one();
}

ChunkPipe::Piece ChunkPipe::buffer(size_t cap) {
    Piece b = recycled_buffer(mu_, spare_, cap);
    b.marks.clear();
    b.frames = false;
    b.raw = 0;
    return b;
}

bool ChunkPipe::take(size_t k, Piece* piece) {
    std::unique_lock<std::mutex> l(mu_);
    if (taking_ != k) {
        taking_ = k;
        l.unlock();
        taken_.notify_all();  // a maker may start the chunk `window` ahead
        l.lock();
    }
    Chunk& c = chunks_[k];
    made_.wait(l, [&] { return !c.q.empty() || c.done; });
    if (c.q.empty()) return false;
    *piece = std::move(c.q.front());
    c.q.pop_front();
    bool room = c.pending >= cap_;
    c.pending -= piece->size;
    l.unlock();
    if (room) taken_.notify_all();  // its maker may be waiting for room
    return true;
}

void ChunkPipe::recycle(Piece piece) {
    if (!piece.p) return;
    std::lock_guard<std::mutex> l(mu_);
    spare_.push_back(std::move(piece));
}

void ChunkPipe::stop() {
    {
        std::lock_guard<std::mutex> l(mu_);
        stop_ = true;
    }
    made_.notify_all();
    taken_.notify_all();
}

}  // namespace capture
