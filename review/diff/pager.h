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
    explicit Output(bool page);
    ~Output();
    Output(const Output&) = delete;
    Output& operator=(const Output&) = delete;

    // A reader that went away (the pager quit) is not an error: the rest is dropped.
    base::Result<void> write(std::string_view s);
    // Close the pipe and wait for the pager to exit.
    void finish();

private:
    base::Fd pipe_;
    pid_t pager_ = -1;
    bool closed_ = false;
    struct sigaction old_pipe_ {
    }, old_int_{}, old_quit_{};
};

// Pure: the pager command for a $PAGER value (nullptr: unset); empty: none.
std::string pager_command(const char* pager_env, bool less_available);

}  // namespace review
