// The shared layer store (helper/store/layers/layer_store.h, layer_gc.h): steps
// held by reference, resolved beneath the store only, swept when unreferenced.
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/session/layer_gc.h"
#include "tests/unit/capture_tree.h"

namespace {

bool exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
}

// STATE/sessions/s with an empty upper and steps/.
std::string empty_session(const std::string& state) {
    std::string s = state + "/sessions/s";
    for (const auto& d : {state + "/sessions", s, s + "/upper", s + "/steps"}) testtree::make(d, "dir");
    return s;
}

}  // namespace

TEST_CASE("layer store: an id is exactly 32 lowercase hex digits", "[layerstore]") {
    CHECK(steps::valid_layer_id("0123456789abcdef0123456789abcdef"));
    CHECK_FALSE(steps::valid_layer_id("0123456789ABCDEF0123456789abcdef"));
    CHECK_FALSE(steps::valid_layer_id("../../../../etc/passwd/0123456789"));
    CHECK_FALSE(steps::valid_layer_id("0123456789abcdef0123456789abcde"));
    CHECK_FALSE(steps::valid_layer_id(""));
}

TEST_CASE("layer store: a shared step resolves into the store; a dir wins over a reference", "[layerstore]") {
    testtree::TempDir t;
    std::string s = empty_session(t.path);
    testtree::make(s + "/steps/0001", "dir");
    testtree::make(s + "/steps/0001/a.txt", "file:one\n");
    testtree::make(s + "/steps/0001.json", "file:{\"step\": 1}");
    REQUIRE(steps::share(s, s + "/steps", 1).ok());
    CHECK_FALSE(exists(s + "/steps/0001"));
    auto id = steps::read_ref(s + "/steps/0001.ref");
    REQUIRE(id.ok());
    auto p = steps::layer_path(s, 1);
    REQUIRE(p.ok());
    CHECK(p.value() == t.path + "/layers/" + id.value());
    CHECK(testtree::read_text(p.value() + "/a.txt") == "one\n");
    REQUIRE(steps::share(s, s + "/steps", 1).ok());  // already shared: unchanged
    CHECK(steps::read_ref(s + "/steps/0001.ref").value() == id.value());
    // A share killed between its reference and its rename: one layer, the dir.
    testtree::make(s + "/steps/0002", "dir");
    testtree::make(s + "/steps/0002.ref", "file:ffffffffffffffffffffffffffffffff\n");
    auto n = steps::count(s);
    REQUIRE(n.ok());
    CHECK(n.value() == 2);
    CHECK(steps::layer_path(s, 2).value() == s + "/steps/0002");
    CHECK_FALSE(steps::check_history(s, false).empty());
    CHECK_FALSE(steps::check_history(s, true).empty());
    CHECK_FALSE(exists(s + "/steps/0002.ref"));
    CHECK(steps::check_history(s, false).empty());
}

TEST_CASE("layer store: a reference never leads outside the store or through a symlink", "[layerstore]") {
    testtree::TempDir t;
    std::string s = empty_session(t.path);
    testtree::make(s + "/steps/0001.ref", "file:../../../etc\n");
    CHECK_FALSE(steps::layer_path(s, 1).ok());
    testtree::make(t.path + "/layers", "dir");
    testtree::make(t.path + "/layers/0123456789abcdef0123456789abcdef", "symlink:/etc");
    testtree::make(s + "/steps/0001.ref", "file:0123456789abcdef0123456789abcdef\n");
    CHECK_FALSE(steps::layer_path(s, 1).ok());
    testtree::make(s + "/steps/0001.ref", "file:abcdefabcdefabcdefabcdefabcdefab\n");  // missing from the store
    auto p = steps::layer_path(s, 1);
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().message.find("is missing from") != std::string::npos);
}

TEST_CASE("layer store: the sweep keeps every referenced layer and removes the others", "[layerstore]") {
    testtree::TempDir t;
    std::string a = t.path + "/sessions/a", b = t.path + "/trash/b";
    for (const auto& d : {t.path + "/sessions", t.path + "/trash", a, b, a + "/steps", b + "/rolled-back"})
        testtree::make(d, "dir");
    std::string kept1 = "11111111111111111111111111111111", kept2 = "22222222222222222222222222222222",
                loose = "33333333333333333333333333333333";
    testtree::make(t.path + "/layers", "dir");
    for (const auto& id : {kept1, kept2, loose}) {
        testtree::make(t.path + "/layers/" + id, "dir");
        testtree::make(t.path + "/layers/" + id + "/f", "file:x");
    }
    testtree::make(a + "/steps/0001.ref", "file:" + kept1 + "\n");
    testtree::make(b + "/rolled-back/0002.ref", "file:" + kept2 + "\n");
    auto dry = steps::sweep_store(t.path, true);
    REQUIRE(dry.ok());
    REQUIRE(dry->ids.size() == 1);
    CHECK(dry->ids[0] == loose);
    CHECK(exists(t.path + "/layers/" + loose));
    auto swept = steps::sweep_store(t.path, false);
    REQUIRE(swept.ok());
    CHECK_FALSE(exists(t.path + "/layers/" + loose));
    CHECK(exists(t.path + "/layers/" + kept1 + "/f"));
    CHECK(exists(t.path + "/layers/" + kept2 + "/f"));
}
