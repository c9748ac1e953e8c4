#include "helper/base/cat.h"

namespace base {

std::string cat(std::initializer_list<std::string_view> parts) {
    size_t n = 0;
    for (auto p : parts) n += p.size();
    std::string s;
    s.reserve(n);
    for (auto p : parts) s += p;
    return s;
}

}  // namespace base
