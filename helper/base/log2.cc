#include "helper/base/log2.h"

#include <bit>

namespace base {

double log2(double x) {
    // x = m * 2^e with m in [1, 2), from the bits (frexp would bind to libm).
    int e = 0;
    if (x < 2.2250738585072014e-308) {  // subnormal: scale into the normal range
        x *= 18014398509481984.0;       // 2^54
        e = -54;
    }
    auto bits = std::bit_cast<uint64_t>(x);
    e += static_cast<int>((bits >> 52) & 0x7ff) - 1023;
    double m = std::bit_cast<double>((bits & ((uint64_t{1} << 52) - 1)) | (uint64_t{1023} << 52));
    if (m > 1.41421356237309504880) {
        m /= 2;
        e++;
    }
    // m in [sqrt(1/2), sqrt(2)]: ln m = 2 atanh(z), |z| <= 0.172, so z^2 < 0.03
    // and 12 terms of the series are below double precision.
    double z = (m - 1) / (m + 1), z2 = z * z, term = z, sum = 0;
    for (int k = 1; k < 25; k += 2) {
        sum += term / k;
        term *= z2;
    }
    return e + 2 * sum * 1.44269504088896340736;  // 1 / ln 2
}

uint64_t round_u64(double x) {
    auto n = static_cast<uint64_t>(x);  // truncates toward zero
    return x - static_cast<double>(n) >= 0.5 ? n + 1 : n;
}

}  // namespace base
