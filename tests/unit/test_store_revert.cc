// revert's clash rule (helper/store/history/revert.h): the same path, or one under a
// dir either side added, deleted or replaced.
#include <catch2/catch.hpp>

#include "helper/store/history/revert.h"

namespace {

std::vector<steps::Clash> clashes(const std::vector<steps::Touched>& mine, const std::vector<steps::Touched>& theirs) {
    std::vector<steps::Clash> out;
    steps::find_clashes(mine, theirs, 3, &out);
    return out;
}

}  // namespace

TEST_CASE("revert clashes: same path, under a dir either side replaced, not mere siblings", "[revert]") {
    std::vector<steps::Touched> mine = {{"a.txt", "M"}, {"d", "A"}, {"d/x", "A"}, {"e/f", "D"}, {"m", "mode"}};
    CHECK(clashes(mine, {{"b.txt", "A"}, {"e/g", "A"}, {"m/new", "A"}}).empty());
    auto c = clashes(mine, {{"a.txt", "D"}});
    REQUIRE(c.size() == 1);
    CHECK(c[0].path == "a.txt");
    CHECK(c[0].by == std::vector<int>{3});
    // Under a dir of mine that was added.
    c = clashes(mine, {{"d/y/z", "A"}});
    REQUIRE(c.size() == 1);
    CHECK(c[0].path == "d");
    // Theirs replaced a dir holding my path.
    c = clashes(mine, {{"e", "T"}});
    REQUIRE(c.size() == 1);
    CHECK(c[0].path == "e/f");
    // A dir only changed in mode on either side is no clash for what is inside.
    CHECK(clashes(mine, {{"e", "mode"}}).empty());
    // "d-2" sorts between "d" and "d/x": a prefix without the slash is no parent.
    CHECK(clashes(mine, {{"d-2", "A"}, {"a.txt.bak", "A"}}).empty());
}
