// log2 and rounding without libm: the layover binary then loads no libm, one
// shared object less at every start (docs/performance.md, issue 20).
#pragma once

#include <cstdint>

namespace base {

// log2(x) for x > 0 (finite), within ~1e-15 relative of std::log2.
double log2(double x);

// x rounded to the nearest integer, halves away from zero, for
// 0 <= x < 2^63 (std::llround for that range).
uint64_t round_u64(double x);

}  // namespace base
