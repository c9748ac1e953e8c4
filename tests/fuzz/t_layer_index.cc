#include <string_view>

#include "capture/scan/layers/layer_index.h"
#include "tests/fuzz/targets.h"

namespace fuzz {

namespace {

bool same(const capture::LayerIndex& a, const capture::LayerIndex& b) {
    if (!(a.key == b.key) || a.dirs.size() != b.dirs.size()) return false;
    for (const auto& [path, d] : a.dirs) {
        const capture::LayerIndex::Dir* e = b.find(path);
        if (!e || e->mark != d.mark || e->names.size() != d.names.size()) return false;
        for (size_t i = 0; i < d.names.size(); i++)
            if (e->names[i].name != d.names[i].name || e->names[i].type != d.names[i].type) return false;
    }
    return true;
}

}  // namespace

// SESSION/layer-index (capture/scan/layers/layer_index.h): what it accepts is a
// set of indexes with valid paths and sorted, valid names, each with a
// root; written back and read again, the same indexes.
int layer_index(const uint8_t* data, size_t size) {
    auto got = capture::indexes_from_bytes(std::string_view(reinterpret_cast<const char*>(data), size));
    std::vector<const capture::LayerIndex*> ptrs;
    for (const auto& l : got) {
        if (!l.find("")) __builtin_trap();
        for (const auto& [path, d] : l.dirs) {
            if (path.find('\0') != std::string::npos || path.rfind('/', 0) == 0) __builtin_trap();
            for (size_t i = 0; i < d.names.size(); i++) {
                const std::string& n = d.names[i].name;
                if (n.empty() || n == "." || n == ".." || n.find('/') != std::string::npos) __builtin_trap();
                if (i > 0 && !(d.names[i - 1].name < n)) __builtin_trap();
            }
        }
        ptrs.push_back(&l);
    }
    auto again = capture::indexes_from_bytes(capture::indexes_to_bytes(ptrs));
    if (again.size() != got.size()) __builtin_trap();
    for (size_t i = 0; i < got.size(); i++)
        if (!same(got[i], again[i])) __builtin_trap();
    return 0;
}

}  // namespace fuzz
