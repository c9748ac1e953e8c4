#include "helper/base/fault.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace base {

Result<void> fault_point(const char* phase, const char* point) {
    static const char* spec = std::getenv("LAYOVER_FAULT");
    if (!spec || !*spec) return Ok();
    static std::mutex mu;  // staging's writer threads reach fault points too
    std::lock_guard<std::mutex> l(mu);
    static std::map<std::string, long> counts;
    std::string key = std::string(phase) + ":" + point + ":";
    long count = ++counts[key];
    std::string all = spec;
    for (size_t at = 0; at <= all.size();) {  // comma-separated specs
        size_t end = all.find(',', at);
        if (end == std::string::npos) end = all.size();
        std::string s = all.substr(at, end - at);
        at = end + 1;
        if (s.compare(0, key.size(), key) != 0) continue;
        std::string rest = s.substr(key.size()), action;
        if (auto colon = rest.find(':'); colon != std::string::npos) {
            action = rest.substr(colon + 1);
            rest = rest.substr(0, colon);
        }
        if (std::strtol(rest.c_str(), nullptr, 10) != count) continue;
        if (action == "kill") std::raise(SIGKILL);
        if (action == "stop") {  // a test acts on the target meanwhile, then sends SIGCONT
            std::raise(SIGSTOP);
            return Ok();
        }
        return sys_error(std::string("injected fault at ") + phase + ":" + point + ":" + rest, EIO);
    }
    return Ok();
}

}  // namespace base
