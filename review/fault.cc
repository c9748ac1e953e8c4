#include "review/fault.h"

#include <csignal>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace review {

base::Result<void> fault_point(const char* phase, const char* point) {
    static const char* spec = std::getenv("LAYOVER_FAULT");
    if (!spec || !*spec) return base::Ok();
    static std::mutex mu;  // staging's writer threads reach fault points too
    std::lock_guard<std::mutex> l(mu);
    static std::map<std::string, long> counts;
    std::string key = std::string(phase) + ":" + point + ":";
    std::string s = spec;
    if (s.compare(0, key.size(), key) != 0) return base::Ok();
    std::string rest = s.substr(key.size());
    std::string action;
    if (auto colon = rest.find(':'); colon != std::string::npos) {
        action = rest.substr(colon + 1);
        rest = rest.substr(0, colon);
    }
    long n = std::strtol(rest.c_str(), nullptr, 10);
    if (++counts[key] != n) return base::Ok();
    if (action == "kill") std::raise(SIGKILL);
    if (action == "stop") {  // a test acts on the target meanwhile, then sends SIGCONT
        std::raise(SIGSTOP);
        return base::Ok();
    }
    return base::sys_error(std::string("injected fault at ") + phase + ":" + point + ":" + rest, EIO);
}

}  // namespace review
