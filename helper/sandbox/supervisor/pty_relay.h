// Runs at a terminal: the command gets its own pty, and the supervisor
// relays its output to the user's terminal through a TermFilter, passing on
// window size changes. Interactive (a terminal on stdin): the pty is the
// command's stdin, stdout, stderr and controlling terminal (so TIOCSTI from
// inside can only reach the sandbox's own terminal), and keys are relayed
// with the user's terminal in raw mode. Output only (stdin not a terminal,
// stdout or stderr one: `echo x | layover run -- cmd`): only the terminal
// fds among 1 and 2 become the pty, not a controlling terminal (as before:
// /dev/tty inside fails rather than waits for keys no one relays); the
// user's terminal keeps its mode, and since the command holds no fd of it,
// its settings too (docs/security.md, "The terminal after a run").
#pragma once
#include <termios.h>

#include <cstddef>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/sandbox/supervisor/term_filter.h"

// What the command's output may have left the terminal in (SGR attributes
// such as concealed text, a scroll region, the alternate screen, the G1
// charset, mouse or focus reporting) would shape how the exit prompt
// that follows is drawn, and what a click types into it. So when the
// relayed output held an escape sequence, a shift-out or a C1 control,
// restore() ends with kTerminalReset (docs/security.md, "The terminal after a run").
inline constexpr const char kTerminalReset[] =
    "\033[?1047l\033[!p\033[?7h\033[?25h\033[m\033[r\017\033(B"
    "\033[?1000l\033[?1002l\033[?1003l\033[?1004l\033[?1006l\033[?2004l";
// Pure: does `buf` hold ESC, SO or a UTF-8 C1 control (U+0080-U+009F)?
// *prev: the last byte of the previous buffer (a C1's first byte may end one).
bool may_change_terminal(const char* buf, size_t n, unsigned char* prev);

// Which of the command's fds 0-2 become the pty (bit N: fd N) when it runs
// with this stdin, stdout, stderr: 0 (no pty) when none is a terminal.
unsigned pty_fds_for_terminals(bool in_tty, bool out_tty, bool err_tty);

class PtyRelay {
public:
    // Allocate a pty for the command's fds in `fds` (pty_fds_for_terminals),
    // sized and set up like the user's terminal: the one on stdin when fds
    // holds 0 (interactive), else the one on stdout, or stderr when only it
    // is one (output only; the output goes there).
    static base::Result<PtyRelay> open(unsigned fds);
    PtyRelay(PtyRelay&&) = default;
    ~PtyRelay();

    int master() const { return master_.get(); }
    bool output_only() const { return !(fds_ & 1); }
    int slave() const { return slave_.get(); }
    void close_slave() { slave_.reset(); }

    void enter_raw();  // interactive: put the user's terminal in raw mode
    void restore();    // give the terminal back as it was (idempotent), reset if the output may have changed it
    void resize();     // copy the terminal's window size to the pty
    // Move bytes for whichever fds are ready; false once the pty is closed.
    bool pump_input();   // stdin -> master
    bool pump_output();  // master -> the user's terminal (out_), through filter_
    void drain();        // copy what is ready now (after the command exits: all that is left)
    // Output the terminal has not taken yet (stopped by ^S, or slow): the
    // master is not read meanwhile, so the command waits, not the supervisor.
    bool output_waiting() const { return !pending_.empty(); }
    int output_fd() const { return out_nb_.valid() ? out_nb_.get() : out_; }
    void flush(bool wait);  // write what waits, as far as the terminal takes it (all, with wait)

private:
    PtyRelay() = default;
    base::Fd master_, slave_;
    unsigned fds_ = 7;         // the command's fds that are the pty
    int term_ = 0;             // the user's terminal: settings, size, raw mode
    int out_ = 1;              // where the output goes
    base::Fd out_nb_;          // out_ reopened non-blocking, when it is a terminal that could be
    bool out_failed_ = false;  // a write there failed: the rest is read and dropped
    struct termios saved_ {};
    bool raw_ = false;
    bool dirty_ = false;      // the relayed output may have changed the terminal's state
    unsigned char last_ = 0;  // the last byte relayed
    TermFilter filter_;       // drops the control strings that reach the host (term_filter.h)
    std::string buf_;         // one read's worth, filtered
    std::string pending_;     // filtered, not yet taken by the terminal
};
