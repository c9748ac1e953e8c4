// Per-step grouping of the diff (review/diff/step_groups.h).
#include <catch2/catch.hpp>

#include "review/diff/step_groups.h"

TEST_CASE("step groups: each file under the last step that touched it or a dir above it", "[steps]") {
    steps::Record a, b, live;
    a.n = 1;
    a.label = "one";
    a.squashed = true;
    a.paths = {{"x", "A"}, {"new", "A"}};
    b.n = 2;
    b.label = "two\x1b";
    b.paths = {{"x", "M"}};
    live.n = 3;
    live.live = true;
    live.paths = {{"y", "A"}};
    auto g = review::group_by_step({a, b, live}, {"new/f", "other", "x", "y"});
    REQUIRE(g.size() == 4);
    CHECK(g[0].header == "# step 1 (squashed): one\n");
    CHECK(g[0].files == std::vector<size_t>{0});
    CHECK(g[1].header == "# step 2: \"two\\x1b\"\n");
    CHECK(g[1].files == std::vector<size_t>{2});
    CHECK(g[2].header == "# live changes (not yet a step)\n");
    CHECK(g[2].files == std::vector<size_t>{3});
    CHECK(g[3].files == std::vector<size_t>{1});
    CHECK(review::group_by_step({a}, {"x"}).empty());
}
