// A temporary file a verb writes before renaming it into place (a patch
// beside `save -o FILE`, a session's capture in the state dir for apply,
// diff and show): while an UnlinkOnSignal names it, a SIGINT, SIGTERM or
// SIGHUP that kills the process unlinks it first, then takes its default
// action. Found by the attack pass of 27 Nov: each Ctrl+C of a 300 MB save
// left a 300 MB `.FILE.tmp-N` beside FILE, and of an apply or diff a
// `.capture-*` copy of the session in the state dir. A signal the process
// already handles or ignores (run's supervisor, the prompt) is left alone;
// SIGKILL cannot be caught (captures are swept by their pid,
// capture/patch/source.cc).
#pragma once
#include <string>

namespace base {

class UnlinkOnSignal {
public:
    explicit UnlinkOnSignal(const std::string& path);
    ~UnlinkOnSignal();
    UnlinkOnSignal(const UnlinkOnSignal&) = delete;
    UnlinkOnSignal& operator=(const UnlinkOnSignal&) = delete;

private:
    int slot_ = -1;  // -1: not armed (no free slot, or a path too long)
};

}  // namespace base
