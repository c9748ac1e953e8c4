#include "review/prompt/io.h"

#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>

namespace review {

namespace {

volatile sig_atomic_t g_interrupted = 0;
bool g_mid_line = false;  // a question is on screen and its line not ended

void on_interrupt(int) { g_interrupted = 1; }

}  // namespace

InterruptGuard::InterruptGuard() {
    g_interrupted = 0;
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: a pending read returns EINTR
    ::sigaction(SIGINT, &sa, &old_int_);
    ::sigaction(SIGQUIT, &sa, &old_quit_);
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGQUIT);
    ::sigprocmask(SIG_UNBLOCK, &s, &old_mask_);
}

InterruptGuard::~InterruptGuard() {
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGQUIT, &old_quit_, nullptr);
}

bool InterruptGuard::interrupted() { return g_interrupted != 0; }

Input ask(const std::string& question, std::string* answer) {
    std::fputs(question.c_str(), stderr);
    std::fflush(stderr);
    g_mid_line = true;
    answer->clear();
    for (;;) {
        if (g_interrupted) return Input::Interrupted;
        char c;
        ssize_t n = ::read(0, &c, 1);
        if (n < 0 && errno == EINTR) continue;  // the flag decides
        if (n <= 0) {
            // EOF in the middle of a line still counts as the line typed.
            if (!answer->empty()) return Input::Line;
            return Input::Eof;
        }
        if (c == '\n') {
            g_mid_line = false;  // the terminal echoed the Enter
            return Input::Line;
        }
        if (answer->size() < 4096) answer->push_back(c);
    }
}

void end_line() {
    if (g_mid_line) std::fputc('\n', stderr);
    g_mid_line = false;
}

void flush_typeahead() {
    if (::isatty(0)) ::tcflush(0, TCIFLUSH);
}

std::string normalize_answer(const std::string& s) {
    size_t a = s.find_first_not_of(" \t\r");
    if (a == std::string::npos) return "";
    size_t b = s.find_last_not_of(" \t\r");
    std::string out = s.substr(a, b - a + 1);
    for (char& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace review
