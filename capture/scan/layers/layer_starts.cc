#include "capture/scan/layers/layer_starts.h"

#include <map>
#include <memory>
#include <mutex>

#include "helper/base/clock.h"
#include "helper/store/layers/steps.h"

namespace capture {

std::function<int64_t(uint32_t)> layer_starts(const std::string& session_dir, std::vector<int> steps) {
    struct Known {
        std::mutex mu;
        std::map<uint32_t, int64_t> start;
    };
    auto known = std::make_shared<Known>();
    return [known, session_dir, steps = std::move(steps)](uint32_t layer) -> int64_t {
        if (layer >= steps.size() || steps[layer] < 0) return 0;
        std::lock_guard<std::mutex> lock(known->mu);
        auto it = known->start.find(layer);
        if (it != known->start.end()) return it->second;
        auto text = steps::layer_start(session_dir, steps[layer]);
        int64_t s = text ? base::parse_rfc3339(text.value()) : -1;
        int64_t ns = s > 0 ? s * 1000000000 : 0;
        known->start[layer] = ns;
        return ns;
    };
}

}  // namespace capture
