// A session's upper layer as a stack of layers (the live upper over its
// frozen steps), read in place by the scan: for each name the topmost layer
// holding it decides; whiteouts, non-dirs and opaque dirs stop the descent
// (docs/history.md, "Capture reads the stack"). One layer is the common case
// and costs nothing extra.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "capture/scan/layers/layer_index.h"
#include "helper/base/dir.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/store/layers/layer_merge.h"

namespace capture {

// One dir of the stack: the layers' dirs that show through, topmost first.
struct UpperDir {
    std::vector<int> fds;
    std::vector<uint32_t> ids;    // each fd's layer in the whole stack (Item::layer)
    std::vector<base::Fd> owned;  // the fds this level opened
    // Each fd's dir in its layer's index (capture/scan/layers/layer_index.h), or
    // null: list it.
    std::vector<const LayerIndex::Dir*> idx;
    // A lower layer's indexed dir is not opened: its fd is then an open dir
    // of that layer above it (its root, at most) and rel its path from
    // there; empty: the fd is the dir itself. Its names are known, and every
    // component of rel is a dir of the frozen layer.
    std::vector<std::string> rel;
    // `name` in dir k, for the *at calls on fds[k] (buf holds a joined path).
    const std::string& name_in(size_t k, const std::string& name, std::string* buf) const {
        if (k >= rel.size() || rel[k].empty()) return name;
        *buf = rel[k] + "/" + name;
        return *buf;
    }
};

// Its names, sorted, each once; with more than one layer, who holds each.
struct UpperListing {
    std::vector<base::DirEntry> names;
    std::vector<std::vector<layers::Holder>> holders;  // empty: one layer, all from fds[0]
    uint32_t holder(size_t i) const { return holders.empty() ? 0 : holders[i][0].layer; }
};
base::Result<UpperListing> list_upper(const UpperDir& d, const std::string& what);

// The merged dir of the listing's name i, whose topmost holder `top` (open,
// its index in d: listing.holder(i)) is a dir, opaque or not: the lower
// layers' dirs that join it. *cut: something below stopped the descent (the
// merged dir is then opaque, as one upper would make it). `path`: the
// name's path in the stack; indexes: each layer's index (by UpperDir::ids),
// or none.
base::Result<UpperDir> merged_dir(const UpperDir& d, const UpperListing& l, size_t i, base::Fd top, bool top_opaque,
                                  bool* cut, const std::string& path = "",
                                  const std::vector<const LayerIndex*>& indexes = {});

}  // namespace capture
