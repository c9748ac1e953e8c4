// A new session's default name (helper/store/session/session.h): YYYYmmdd-HHMMSS-xxxx,
// never one already in use. Found by attack22: two runs in one second drew
// the same 16-bit suffix 1 time in 65,536, and the second then resumed the
// first's session (a discarding run discarded its changes).
#include <catch2/catch.hpp>
#include <set>
#include <string>

#include "helper/store/session/session.h"

TEST_CASE("session name: the format, and a name in use is drawn again", "[store][session]") {
    std::string n = session::new_name();
    REQUIRE(n.size() == 20);
    CHECK(n[8] == '-');
    CHECK(n[15] == '-');
    CHECK(n.find_first_not_of("0123456789abcdef", 16) == std::string::npos);
    // Every name but the fifth drawn is taken: the fifth is returned.
    std::set<std::string> seen;
    std::string got = session::new_name([&](const std::string& name) {
        seen.insert(name);
        return seen.size() < 5;
    });
    CHECK(seen.size() == 5);
    CHECK(seen.count(got) == 1);
}
