#include "helper/store/layers/layer_merge.h"

#include <algorithm>
#include <utility>

namespace layers {

std::vector<MergedName> merge_listings(std::vector<std::vector<base::DirEntry>> listings) {
    std::vector<MergedName> out;
    if (listings.empty()) return out;
    std::vector<size_t> at(listings.size(), 0);
    for (;;) {
        // The smallest name any layer has left; the topmost layer holding it first.
        const std::string* least = nullptr;
        for (size_t i = 0; i < listings.size(); i++)
            if (at[i] < listings[i].size() && (!least || listings[i][at[i]].name < *least))
                least = &listings[i][at[i]].name;
        if (!least) break;
        MergedName m;
        std::string name = *least;
        for (size_t i = 0; i < listings.size(); i++) {
            if (at[i] >= listings[i].size() || listings[i][at[i]].name != name) continue;
            base::DirEntry& e = listings[i][at[i]++];
            m.holders.push_back(Holder{static_cast<uint32_t>(i), e.type});
            if (m.holders.size() == 1) m.entry = std::move(e);
        }
        out.push_back(std::move(m));
    }
    return out;
}

bool Descent::joins(Below k) {
    if (done_) return false;
    if (k == Below::Other) {
        done_ = cut_ = true;
        return false;
    }
    if (k == Below::OpaqueDir) done_ = cut_ = true;
    return true;
}

}  // namespace layers
