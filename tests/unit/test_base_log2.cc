// base::log2 and base::round_u64: libm's results without linking libm.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>

#include "helper/base/log2.h"

TEST_CASE("base::log2 matches std::log2 from subnormals to huge values") {
    CHECK(base::log2(1.0) == 0.0);
    CHECK(base::log2(8.0) == 3.0);
    CHECK(base::log2(0.5) == -1.0);
    int n = 0;
    for (double x = 1e-310; x < 1e300; x *= 1.37, n++) {  // from subnormals up
        double want = std::log2(x);
        INFO("x = " << x);
        CHECK(std::fabs(base::log2(x) - want) <= 4e-15 * std::max(1.0, std::fabs(want)));
    }
    CHECK(n > 1000);
    // Probabilities as the entropy check forms them (count / length).
    for (int len : {7, 40, 100, 4096})
        for (int c = 1; c <= len; c++) {
            double p = static_cast<double>(c) / len;
            CHECK(std::fabs(base::log2(p) - std::log2(p)) <= 1e-15 * std::max(1.0, std::fabs(std::log2(p))));
        }
}

TEST_CASE("base::round_u64 rounds as std::llround for non-negative values") {
    for (double x : {0.0, 0.4, 0.5, 0.6, 1.49999, 1.5, 2.5, 999.5, 1e3 * 1.5, 86400.0 * 365 * 1000, 1234567.8901})
        CHECK(base::round_u64(x) == static_cast<uint64_t>(std::llround(x)));
}
