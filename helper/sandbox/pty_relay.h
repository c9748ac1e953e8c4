// Interactive runs: the command gets its own pty (so TIOCSTI from inside
// can only reach the sandbox's own terminal), and the supervisor relays it
// to the user's terminal in raw mode, passing on window size changes.
#pragma once
#include <termios.h>

#include <cstddef>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/sandbox/term_filter.h"

// What the command's output may have left the terminal in (SGR attributes
// such as concealed text, a scroll region, the alternate screen, the G1
// charset, mouse or focus reporting) would shape how the exit prompt
// that follows is drawn, and what a click types into it. So when the
// relayed output held an escape sequence, a shift-out or a C1 control,
// restore() ends with kTerminalReset (docs/security.md, "Isolation profile").
inline constexpr const char kTerminalReset[] =
    "\033[?1047l\033[!p\033[?7h\033[?25h\033[m\033[r\017\033(B"
    "\033[?1000l\033[?1002l\033[?1003l\033[?1004l\033[?1006l\033[?2004l";
// A run without the relay (stdin not a terminal) whose stdout or stderr is
// one: the command writes to that terminal directly, unseen, and may change
// its settings (echo off, which the user's shell then keeps) or leave it
// concealing the lines layover prints next (the session kept, what an
// --on-exit apply applied). Made before the run, it saves each such
// terminal's settings; restore() puts them back and writes kTerminalReset
// to each (once when both are the same; none when TERM is "dumb").
class SharedTerminal {
public:
    SharedTerminal();
    void restore();

private:
    struct Saved {
        int fd = -1;
        struct termios attrs {};
        bool have_attrs = false;
    };
    Saved saved_[2];
};
// Pure: does `buf` hold ESC, SO or a UTF-8 C1 control (U+0080-U+009F)?
// *prev: the last byte of the previous buffer (a C1's first byte may end one).
bool may_change_terminal(const char* buf, size_t n, unsigned char* prev);

class PtyRelay {
public:
    // Allocate a pty sized and set up like the terminal on stdin.
    static base::Result<PtyRelay> open();
    PtyRelay(PtyRelay&&) = default;
    ~PtyRelay();

    int master() const { return master_.get(); }
    int slave() const { return slave_.get(); }
    void close_slave() { slave_.reset(); }

    void enter_raw();  // put the user's terminal in raw mode
    void restore();    // give the terminal back as it was (idempotent), reset if the output may have changed it
    void resize();     // copy the terminal's window size to the pty
    // Move bytes for whichever fds are ready; false once the pty is closed.
    bool pump_input();   // stdin -> master
    bool pump_output();  // master -> stdout, through filter_
    void drain();        // after the command exits: copy what is left

private:
    PtyRelay() = default;
    base::Fd master_, slave_;
    struct termios saved_ {};
    bool raw_ = false;
    bool dirty_ = false;      // the relayed output may have changed the terminal's state
    unsigned char last_ = 0;  // the last byte relayed
    TermFilter filter_;       // drops the control strings that reach the host (term_filter.h)
    std::string out_;         // one read's worth, filtered
};
