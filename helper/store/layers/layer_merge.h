// The pure part of reading a layer stack (docs/history.md, "Capture reads
// the stack"): which layer's entry a name shows, and which layers' dirs a
// merged dir is made of. No syscalls: the caller lists and stats.
#pragma once
#include <cstdint>
#include <vector>

#include "helper/base/dir.h"

namespace layers {

// One layer listing a name: its index in the stack (0 = topmost) and d_type.
struct Holder {
    uint32_t layer = 0;
    unsigned char type = 0;
};

// A name of a merged dir listing: the entry of the topmost layer holding it
// (which decides what the name is) and every layer that lists it, topmost first.
struct MergedName {
    base::DirEntry entry;
    std::vector<Holder> holders;
};

// The listings of one dir in each layer (topmost first, each sorted
// bytewise, as base::list_dir gives them) merged into one sorted listing,
// every name once.
std::vector<MergedName> merge_listings(std::vector<std::vector<base::DirEntry>> listings);

// What a layer below the topmost holds under a merged dir's name.
enum class Below { Dir, OpaqueDir, Other };  // Other: a whiteout or a non-dir

// Going down a dir's holders: whether the next one joins the merged dir,
// and whether the stack stops at it. `cut` ends true when something stopped
// the descent (an opaque dir, a whiteout, a non-dir): the merged dir then
// hides everything below, as an opaque dir of one upper would.
class Descent {
public:
    explicit Descent(bool top_opaque) : done_(top_opaque), cut_(top_opaque) {}
    // False once the descent is over (this holder and all below are hidden).
    bool joins(Below k);
    bool done() const { return done_; }
    bool cut() const { return cut_; }

private:
    bool done_, cut_;
};

}  // namespace layers
