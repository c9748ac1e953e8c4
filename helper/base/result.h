// Errors as values: Result<T> holds a T or an Error with context.
// Library code returns these; only main() prints and picks an exit code.
#pragma once
#include <string>
#include <utility>
#include <variant>

namespace base {

struct Error {
    std::string message;  // one line: what failed, why, and the fix where known
    int code = 0;         // errno, when the cause was a syscall (0 otherwise)

    // Prefix context on the way up: "saving session x: " + message.
    Error context(const std::string& what) const { return Error{what + ": " + message, code}; }
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(T value) : v_(std::move(value)) {}
    Result(Error e) : v_(std::move(e)) {}
    bool ok() const { return v_.index() == 0; }
    explicit operator bool() const { return ok(); }
    T& value() & { return std::get<0>(v_); }
    T&& value() && { return std::get<0>(std::move(v_)); }
    const T& value() const& { return std::get<0>(v_); }
    T* operator->() { return &std::get<0>(v_); }
    T& operator*() & { return std::get<0>(v_); }
    const Error& error() const { return std::get<1>(v_); }

private:
    std::variant<T, Error> v_;
};

template <>
class [[nodiscard]] Result<void> {
public:
    Result() = default;
    Result(Error e) : err_(std::move(e)), ok_(false) {}
    bool ok() const { return ok_; }
    explicit operator bool() const { return ok_; }
    const Error& error() const { return err_; }

private:
    Error err_;
    bool ok_ = true;
};

inline Result<void> Ok() { return {}; }

// errno-based error: "what: strerror(errno)". Callers add the fix where they know it.
Error sys_error(const std::string& what, int err);
Error sys_error(const std::string& what);  // uses the current errno
Error error(const std::string& message);

}  // namespace base

// TRY-style early returns keep the happy path linear.
#define LAYOVER_CAT2(a, b) a##b
#define LAYOVER_CAT(a, b) LAYOVER_CAT2(a, b)
#define TRY_VOID(expr)                           \
    do {                                         \
        auto&& _try_r = (expr);                  \
        if (!_try_r.ok()) return _try_r.error(); \
    } while (0)
#define TRY_IMPL(tmp, decl, expr)      \
    auto tmp = (expr);                 \
    if (!tmp.ok()) return tmp.error(); \
    decl = std::move(tmp).value()
#define TRY(decl, expr) TRY_IMPL(LAYOVER_CAT(_try_, __LINE__), decl, expr)
