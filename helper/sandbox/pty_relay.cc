#include "helper/sandbox/pty_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

PtyRelay::~PtyRelay() { restore(); }

base::Result<PtyRelay> PtyRelay::open() {
    PtyRelay p;
    p.master_.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!p.master_.valid()) return base::sys_error("allocating a pty");
    if (::grantpt(p.master_.get()) != 0 || ::unlockpt(p.master_.get()) != 0)
        return base::sys_error("setting up the pty");
    char name[128];
    if (::ptsname_r(p.master_.get(), name, sizeof name) != 0) return base::sys_error("naming the pty");
    p.slave_.reset(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!p.slave_.valid()) return base::sys_error(std::string("opening ") + name);
    struct termios t;
    if (::tcgetattr(STDIN_FILENO, &t) == 0) ::tcsetattr(p.slave_.get(), TCSANOW, &t);
    p.resize();
    return p;
}

void PtyRelay::enter_raw() {
    if (raw_ || ::tcgetattr(STDIN_FILENO, &saved_) != 0) return;
    struct termios raw = saved_;
    ::cfmakeraw(&raw);
    if (::tcsetattr(STDIN_FILENO, TCSADRAIN, &raw) == 0) raw_ = true;
}

void PtyRelay::restore() {
    if (!raw_) return;
    const char* term = ::getenv("TERM");  // a dumb terminal interprets none of it, and would show it
    if (dirty_ && !(term && std::string_view(term) == "dumb"))
        (void)base::write_all(STDOUT_FILENO, kTerminalReset, sizeof kTerminalReset - 1);
    dirty_ = false;
    ::tcsetattr(STDIN_FILENO, TCSADRAIN, &saved_);
    raw_ = false;
}

SharedTerminal::SharedTerminal() {
    // stderr first (layover's own lines go there), stdout only when it is another terminal.
    struct stat err = {};
    struct stat out = {};
    bool err_tty = ::isatty(STDERR_FILENO) == 1 && ::fstat(STDERR_FILENO, &err) == 0;
    bool out_tty = ::isatty(STDOUT_FILENO) == 1 && ::fstat(STDOUT_FILENO, &out) == 0;
    if (err_tty) saved_[0].fd = STDERR_FILENO;
    if (out_tty && !(err_tty && out.st_rdev == err.st_rdev)) saved_[1].fd = STDOUT_FILENO;
    for (auto& s : saved_)
        if (s.fd >= 0) s.have_attrs = ::tcgetattr(s.fd, &s.attrs) == 0;
}

void SharedTerminal::restore() {
    const char* term = ::getenv("TERM");
    bool dumb = term && std::string_view(term) == "dumb";
    for (auto& s : saved_) {
        if (s.fd < 0) continue;
        // Only when changed, and only from the foreground: tcsetattr from a
        // background job (`layover run ... < /dev/null &`) would stop it (SIGTTOU).
        struct termios now = {};
        if (s.have_attrs && ::tcgetattr(s.fd, &now) == 0 && std::memcmp(&now, &s.attrs, sizeof now) != 0 &&
            ::tcgetpgrp(s.fd) == ::getpgrp())
            ::tcsetattr(s.fd, TCSADRAIN, &s.attrs);
        if (!dumb) (void)base::write_all(s.fd, kTerminalReset, sizeof kTerminalReset - 1);
        s.fd = -1;
    }
}

bool may_change_terminal(const char* buf, size_t n, unsigned char* prev) {
    // Eight bytes at a time past words holding no ESC, SO or C2 (a C1's first byte).
    size_t i = 0;
    if (*prev == 0xc2 && n > 0) {
        unsigned char c = static_cast<unsigned char>(buf[0]);
        if (c >= 0x80 && c <= 0x9f) return *prev = c, true;
    }
    for (;;) {
        for (uint64_t w; i + 8 <= n; i += 8) {
            std::memcpy(&w, buf + i, 8);
            if (*prev == 0xc2 || word_has_byte(w, 0x1b) || word_has_byte(w, 0x0e) || word_has_byte(w, 0xc2)) break;
            *prev = static_cast<unsigned char>(buf[i + 7]);
        }
        if (i == n) return false;
        size_t end = i + 8 < n ? i + 8 : n;
        for (; i < end; i++) {
            unsigned char c = static_cast<unsigned char>(buf[i]);
            if (c == 0x1b || c == 0x0e || (*prev == 0xc2 && c >= 0x80 && c <= 0x9f)) return *prev = c, true;
            *prev = c;
        }
    }
}

void PtyRelay::resize() {
    struct winsize ws;
    if (::ioctl(STDIN_FILENO, TIOCGWINSZ, &ws) == 0 && master_.valid()) ::ioctl(master_.get(), TIOCSWINSZ, &ws);
}

namespace {

// Copy one read's worth; false on EOF or error (EIO: the pty's other side
// closed).
bool copy_once(int from, int to) {
    char buf[16384];
    ssize_t n = ::read(from, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    return base::write_all(to, buf, static_cast<size_t>(n)).ok();
}

}  // namespace

bool PtyRelay::pump_input() { return copy_once(STDIN_FILENO, master_.get()); }
bool PtyRelay::pump_output() {
    char buf[16384];
    ssize_t n = ::read(master_.get(), buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return true;
    if (n <= 0) return false;
    out_.clear();
    filter_.feed(buf, static_cast<size_t>(n), &out_);
    if (out_.empty()) return true;
    if (!dirty_ && may_change_terminal(out_.data(), out_.size(), &last_)) dirty_ = true;
    return base::write_all(STDOUT_FILENO, out_.data(), out_.size()).ok();
}

void PtyRelay::drain() {
    for (;;) {
        struct pollfd p = {master_.get(), POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0 || !(p.revents & POLLIN)) return;
        if (!pump_output()) return;
    }
}
