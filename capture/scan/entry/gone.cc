#include "capture/scan/entry/gone.h"

#include <algorithm>

namespace capture {

std::vector<std::string> only_below(const std::vector<base::DirEntry>& upper,
                                    const std::vector<base::DirEntry>& lower) {
    std::vector<std::string> out;
    size_t i = 0;
    for (const auto& l : lower) {
        while (i < upper.size() && upper[i].name < l.name) i++;
        if (i < upper.size() && upper[i].name == l.name) continue;
        out.push_back(l.name);
    }
    return out;
}

std::pair<size_t, size_t> gone_span(const std::vector<std::string>& gone, const std::vector<base::DirEntry>& upper,
                                    size_t from, size_t to) {
    auto before = [&](size_t i) {  // the gone names sorting before upper[i]; all of them past the end
        if (i >= upper.size()) return gone.size();
        return static_cast<size_t>(std::lower_bound(gone.begin(), gone.end(), upper[i].name) - gone.begin());
    };
    return {from == 0 ? 0 : before(from), before(to)};
}

}  // namespace capture
