// Run a callable at scope exit unless dismissed.
#pragma once
#include <utility>

namespace base {

template <class F>
class Defer {
public:
    explicit Defer(F f) : f_(std::move(f)) {}
    ~Defer() {
        if (armed_) f_();
    }
    void dismiss() { armed_ = false; }
    Defer(const Defer&) = delete;
    Defer& operator=(const Defer&) = delete;

private:
    F f_;
    bool armed_ = true;
};

}  // namespace base
