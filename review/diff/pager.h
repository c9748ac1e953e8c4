// Where diff output goes: stdout, or a pager ($PAGER, default `less -FRX`)
// reading a pipe when stdout is a terminal.
#pragma once
#include <signal.h>
#include <sys/types.h>

#include <string_view>

#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace review {

class Output {
public:
    // page: start the pager (when one is configured and found); else stdout.
    // colors: the output holds our ANSI colors, so less is told to pass
    // them (LESS=FRX); without them it gets LESS=FX and shows any stray
    // control byte visibly. A LESS the user set is kept as it is.
    explicit Output(bool page, bool colors = true);
    ~Output();
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;

    // A reader that went away (the pager quit) is not an error: the rest is dropped.
    base::Result<void> write(std::string_view s);
    // Close the pipe and wait for the pager to exit.
    void finish();
    // The pipe to the pager, or -1 when output goes straight to stdout.
    int pager_fd() const { return pipe_.valid() ? pipe_.get() : -1; }

private:
    base::Fd pipe_;
    pid_t pager_ = -1;
    bool closed_ = false;
    struct sigaction old_pipe_ {
    }, old_int_{}, old_quit_{};
};

// Everything written to stdout (fd 1 and stdio) goes to the pager until
// finish() or destruction, as git pages its output: for verbs that print
// with stdio (status, show). Stderr is left alone.
class PagedStdout {
public:
    PagedStdout(bool page, bool colors);
    ~PagedStdout();
    PagedStdout(const PagedStdout&) = delete;
    PagedStdout& operator=(const PagedStdout&) = delete;
    void finish();

private:
    Output out_;
    base::Fd saved_;  // the real stdout while fd 1 is the pager's pipe
};

// Pure: the pager command for a $PAGER value (nullptr: unset); empty: none.
std::string pager_command(const char* pager_env, bool less_available);

}  // namespace review
