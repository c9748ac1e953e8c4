// The processes still running in the sandbox's PID namespace when the
// command exits (read from init's own /proc), for one line on stderr.
#pragma once
#include <string>
#include <vector>

struct Leftover {
    int pid;
    std::string name;
};

// Every process but PID 1, in pid order.
std::vector<Leftover> list_leftovers();

// "node (pid 14), sleep (pid 20)", at most `max` named, then ", …". Pure.
std::string describe_leftovers(const std::vector<Leftover>& procs, size_t max);
