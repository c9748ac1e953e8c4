// Interactive runs: the command gets its own pty (so TIOCSTI from inside
// can only reach the sandbox's own terminal), and the supervisor relays it
// to the user's terminal in raw mode, passing on window size changes.
#pragma once
#include <termios.h>

#include "helper/base/fd.h"
#include "helper/base/result.h"

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
    void restore();    // give the terminal back as it was (idempotent)
    void resize();     // copy the terminal's window size to the pty
    // Move bytes for whichever fds are ready; false once the pty is closed.
    bool pump_input();   // stdin -> master
    bool pump_output();  // master -> stdout
    void drain();        // after the command exits: copy what is left

private:
    PtyRelay() = default;
    base::Fd master_, slave_;
    struct termios saved_ {};
    bool raw_ = false;
};
