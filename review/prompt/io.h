// Terminal input for the exit-review prompt: line reads that tell Enter,
// EOF and Ctrl+C apart, and flushing of type-ahead.
#pragma once
#include <signal.h>

#include <string>

namespace review {

enum class Input { Line, Eof, Interrupted };

// While alive, SIGINT/SIGQUIT interrupt reads instead of killing the
// process (so Ctrl+C can keep the session), and are unblocked in case the
// parent left them blocked.
class InterruptGuard {
public:
    InterruptGuard();
    ~InterruptGuard();
    InterruptGuard(const InterruptGuard&) = delete;
    InterruptGuard& operator=(const InterruptGuard&) = delete;
    static bool interrupted();

private:
    struct sigaction old_int_ {
    }, old_quit_{};
    sigset_t old_mask_{};
};

// Print `question` on stderr and read one line from stdin (without the
// newline). Lines longer than 4 KiB are cut.
Input ask(const std::string& question, std::string* answer);

// End the line a question left open (after Ctrl+C or EOF at it), so the
// next message starts on a line of its own.
void end_line();

// Drop input typed before the prompt appeared (keys meant for the program).
void flush_typeahead();

// Pure: trim spaces and lowercase ASCII.
std::string normalize_answer(const std::string& s);

}  // namespace review
