#pragma once
// A pool of recycled byte buffers (the writer's frames, the save threads'
// chunks): B has `std::unique_ptr<char[]> p`, `size_t size, cap`.
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

namespace capture {

// The first spare of at least `cap` bytes (taken under `mu`), else a new
// one; its size is 0.
template <class B>
B recycled_buffer(std::mutex& mu, std::vector<B>& spare, size_t cap) {
    B b;
    {
        std::lock_guard<std::mutex> l(mu);
        for (size_t i = 0; i < spare.size(); i++)
            if (spare[i].cap >= cap) {
                b = std::move(spare[i]);
                spare[i] = std::move(spare.back());
                spare.pop_back();
                break;
            }
    }
    if (!b.p) {
        b.p.reset(new char[cap]);  // not zeroed: every byte used is written first
        b.cap = cap;
    }
    b.size = 0;
    return b;
}

}  // namespace capture
