// One libFuzzer binary per target: built with -DFUZZ_TARGET=fuzz::NAME.
#include "tests/fuzz/targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) { return FUZZ_TARGET(data, size); }
