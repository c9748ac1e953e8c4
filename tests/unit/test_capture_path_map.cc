// capture::PathMap, the patch reader's flat map of paths: every key added is
// found with its value through growth, keys it owns outlive the caller's.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "capture/patch/path_map.h"

using capture::PathMap;

TEST_CASE("path map: keys are found with their values through growth; absent keys are not") {
    PathMap m;  // sized for nothing: grows many times
    std::vector<std::string> keys;
    for (int i = 0; i < 5000; i++) keys.push_back("d" + std::to_string(i % 50) + "/f" + std::to_string(i));
    for (size_t i = 0; i < keys.size(); i++) {
        bool fresh = false;
        uint32_t* v = m.get(keys[i], static_cast<uint32_t>(i), &fresh);
        CHECK(fresh);
        CHECK(*v == i);
    }
    CHECK(m.size() == keys.size());
    for (size_t i = 0; i < keys.size(); i++) {
        const uint32_t* v = m.find(keys[i]);
        REQUIRE(v);
        CHECK(*v == i);
        bool fresh = true;
        CHECK(*m.get(keys[i], 99, &fresh) == i);  // present: its value, not init
        CHECK_FALSE(fresh);
    }
    CHECK_FALSE(m.find("d1/f0"));  // a prefix mix of two keys
    CHECK_FALSE(m.find("d0/f"));
    CHECK_FALSE(m.find(""));
    *m.get("") = 7;  // the empty path is a key like any other
    CHECK(*m.find("") == 7);
    CHECK(m.size() == keys.size() + 1);
}

TEST_CASE("path map: owned keys are copies; unowned ones are the caller's views") {
    PathMap own(4, true);
    std::string k = "a/b";
    std::string big(40000, 'x');  // over a quarter of a key block: stored on its own
    own.get(k, 1);
    own.get(big, 2);
    k[0] = 'z';
    big[0] = 'y';
    CHECK(own.find("a/b"));
    CHECK_FALSE(own.find("z/b"));
    CHECK(*own.find(std::string(40000, 'x')) == 2);
    std::string shared = "p/q";
    PathMap views(4);
    views.get(shared, 3);
    CHECK(*views.find("p/q") == 3);
    views.reserve(1000);  // a rehash keeps every entry
    CHECK(*views.find("p/q") == 3);
}
