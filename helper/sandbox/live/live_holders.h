// The processes of a running sandbox that keep its overlay busy: files open
// for writing (and writable shared mappings), which make the kernel refuse
// the read-only remount of a checkpoint, and working directories and open
// directories on it, which would stay on the frozen mount after it. Read
// from the host's /proc (the sandbox's processes are the supervisor's
// descendants, so it may read their fds).
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

struct Holder {
    pid_t pid = 0;
    std::string comm;  // the process's name
    std::string what;  // "has /t/a.txt open for writing", "has its working directory in /t/d", ...
};

// Every descendant of init (not init itself) holding the overlay mounted
// on `target` in its own mount namespace.
std::vector<Holder> find_holders(pid_t init, const std::string& target, bool writers);
// "pid 12 (vim) has /t/a.txt open for writing; ..." (at most three, then "and N more").
std::string describe_holders(const std::vector<Holder>& h);
