#include "helper/sandbox/supervisor/pty_relay.h"

#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string_view>

PtyRelay::~PtyRelay() { restore(); }

unsigned pty_fds_for_terminals(bool in_tty, bool out_tty, bool err_tty) {
    if (in_tty) return 7;
    return (out_tty ? 2u : 0u) | (err_tty ? 4u : 0u);
}

base::Result<PtyRelay> PtyRelay::open(unsigned fds) {
    PtyRelay p;
    p.fds_ = fds;
    if (p.output_only()) {
        p.term_ = p.out_ = fds & 2 ? STDOUT_FILENO : STDERR_FILENO;
        p.filter_ = TermFilter(false);  // the terminal's answers would reach the user's shell, not the command
    }
    // Its own open file description: O_NONBLOCK there leaves the shell's alone.
    if (::isatty(p.out_) == 1)
        p.out_nb_.reset(
            ::open(("/proc/self/fd/" + std::to_string(p.out_)).c_str(), O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC));
    p.master_.reset(::posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!p.master_.valid()) return base::sys_error("allocating a pty");
    if (::grantpt(p.master_.get()) != 0 || ::unlockpt(p.master_.get()) != 0)
        return base::sys_error("setting up the pty");
    char name[128];
    if (::ptsname_r(p.master_.get(), name, sizeof name) != 0) return base::sys_error("naming the pty");
    p.slave_.reset(::open(name, O_RDWR | O_NOCTTY | O_CLOEXEC));
    if (!p.slave_.valid()) return base::sys_error(std::string("opening ") + name);
    struct termios t;
    if (::tcgetattr(p.term_, &t) == 0) ::tcsetattr(p.slave_.get(), TCSANOW, &t);
    p.resize();
    return p;
}

void PtyRelay::enter_raw() {
    if (raw_ || output_only() || ::tcgetattr(term_, &saved_) != 0) return;
    struct termios raw = saved_;
    ::cfmakeraw(&raw);
    if (::tcsetattr(term_, TCSADRAIN, &raw) == 0) raw_ = true;
}

void PtyRelay::restore() {
    flush(true);
    const char* term = ::getenv("TERM");  // a dumb terminal interprets none of it, and would show it
    if (dirty_ && !out_failed_ && !(term && std::string_view(term) == "dumb"))
        (void)base::write_all(out_, kTerminalReset, sizeof kTerminalReset - 1);
    dirty_ = false;
    if (raw_) ::tcsetattr(term_, TCSADRAIN, &saved_);
    raw_ = false;
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
    if (::ioctl(term_, TIOCGWINSZ, &ws) == 0 && master_.valid()) ::ioctl(master_.get(), TIOCSWINSZ, &ws);
}

namespace {

constexpr size_t kChunk = 16384;

// One read: the bytes read, 0 when there is nothing now (EINTR, EAGAIN),
// -1 on EOF or error (EIO: the pty's other side closed).
ssize_t read_once(int from, char* buf) {
    ssize_t n = ::read(from, buf, kChunk);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) return 0;
    return n <= 0 ? -1 : n;
}

}  // namespace

bool PtyRelay::pump_input() {
    char buf[kChunk];
    ssize_t n = read_once(STDIN_FILENO, buf);
    return n >= 0 && base::write_all(master_.get(), buf, static_cast<size_t>(n)).ok();
}

bool PtyRelay::pump_output() {
    char buf[kChunk];
    ssize_t n = read_once(master_.get(), buf);
    if (n <= 0) return n == 0;
    if (out_failed_) return true;  // read on, so that the command never blocks on a full pty
    buf_.clear();
    filter_.feed(buf, static_cast<size_t>(n), &buf_);
    if (buf_.empty()) return true;
    if (!dirty_ && may_change_terminal(buf_.data(), buf_.size(), &last_)) dirty_ = true;
    if (!out_nb_.valid()) {
        out_failed_ = !base::write_all(out_, buf_.data(), buf_.size()).ok();
        return true;
    }
    if (pending_.empty()) pending_.swap(buf_);
    else pending_ += buf_;
    flush(false);
    return true;
}

void PtyRelay::flush(bool wait) {
    size_t done = 0;
    while (done < pending_.size()) {
        ssize_t n = ::write(out_nb_.get(), pending_.data() + done, pending_.size() - done);
        if (n > 0) {
            done += static_cast<size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        struct pollfd p = {out_nb_.get(), POLLOUT, 0};
        if (n < 0 && errno == EAGAIN && wait && (::poll(&p, 1, -1) >= 0 || errno == EINTR)) continue;
        if (n < 0 && errno == EAGAIN && !wait) break;
        out_failed_ = true;  // hung up, or gone: read on and drop
        done = pending_.size();
    }
    pending_.erase(0, done);
}

void PtyRelay::drain() {
    // POLLHUP once every copy of the slave is closed: a read then still
    // returns what the command wrote last, then fails (EIO).
    flush(true);
    for (;;) {
        struct pollfd p = {master_.get(), POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0 || !(p.revents & (POLLIN | POLLHUP))) return;
        if (!pump_output()) return;
        flush(true);
    }
}
