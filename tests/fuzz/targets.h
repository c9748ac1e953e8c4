// Fuzz targets (docs/security.md "Fuzzing"): each takes arbitrary bytes and
// must return without a crash, leak, hang or over-budget allocation. Built
// as libFuzzer binaries by `make fuzz` (clang, ASan+UBSan); the committed
// corpora and crashers replay through the same functions in `make test`
// (tests/unit/test_fuzz_replay.cc, g++).
#pragma once
#include <cstddef>
#include <cstdint>

namespace fuzz {

using Target = int (*)(const uint8_t* data, size_t size);

int patch(const uint8_t* data, size_t size);     // show, diff and apply --dry-run of a patch file
int zframe(const uint8_t* data, size_t size);    // the zstd frame walker
int json(const uint8_t* data, size_t size);      // the manifest, sums, step record and control readers
int glob(const uint8_t* data, size_t size);      // glob_match and PathFilter
int udiff(const uint8_t* data, size_t size);     // the unified-diff writer, applied back
int ipc(const uint8_t* data, size_t size);       // the rename worker's messages (rename_call)
int layer_index(const uint8_t* data, size_t size);  // SESSION/layer-index (capture/scan/layers/layer_index.h)

struct Named {
    const char* name;
    Target fn;
};
inline constexpr Named kTargets[] = {
    {"patch", patch}, {"zframe", zframe}, {"json", json}, {"glob", glob}, {"udiff", udiff}, {"ipc", ipc},
    {"layer_index", layer_index},
};

}  // namespace fuzz
