#include "helper/sandbox/setup/leftovers.h"

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>

std::vector<Leftover> list_leftovers() {
    std::vector<Leftover> out;
    DIR* d = ::opendir("/proc");
    if (!d) return out;
    while (struct dirent* e = ::readdir(d)) {
        char* end = nullptr;
        long pid = std::strtol(e->d_name, &end, 10);
        if (*end || pid <= 1) continue;
        std::ifstream comm(std::string("/proc/") + e->d_name + "/comm");
        std::string name;
        if (!std::getline(comm, name)) continue;  // gone meanwhile
        out.push_back({static_cast<int>(pid), name});
    }
    ::closedir(d);
    std::sort(out.begin(), out.end(), [](const Leftover& a, const Leftover& b) { return a.pid < b.pid; });
    return out;
}

std::string describe_leftovers(const std::vector<Leftover>& procs, size_t max) {
    std::string s;
    for (size_t i = 0; i < procs.size() && i < max; i++) {
        std::string name;
        for (char c : procs[i].name) name += (c >= 0x20 && c < 0x7f) ? c : '?';  // comm is the agent's choice
        s += (i ? ", " : "") + name + " (pid " + std::to_string(procs[i].pid) + ")";
    }
    if (procs.size() > max) s += ", …";
    return s;
}
