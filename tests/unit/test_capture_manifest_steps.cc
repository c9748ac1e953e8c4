// A patch's step records (docs/patch-format.md "steps"): written into the
// manifest, read back, and refused when they are not what save writes.
#include <catch2/catch.hpp>

#include "capture/patch/manifest.h"

using namespace capture;

namespace {

std::string with_steps(const std::string& steps) {
    return "{\"format\":\"layover-patch/1\",\"target\":\"/t\",\"changes\":[],\"base\":[],\"steps\":" + steps + "}";
}

}  // namespace

TEST_CASE("manifest steps: records round-trip, squashed and live flags and byte paths included", "[steps]") {
    Manifest m;
    m.format = "layover-patch/1";
    m.target = "/t";
    steps::Record a;
    a.n = 1;
    a.label = "sh -c \x1b[31mx";
    a.start = "2026-01-01T00:00:00Z";
    a.end = "2026-01-01T00:00:01Z";
    a.squashed = true;
    a.paths = {{"b\xff", "A"}, {"d/e", "mode"}};
    steps::Record live;
    live.n = 2;
    live.live = true;
    live.paths = {{"b\xff", "D"}};
    m.steps = {a, live};
    std::string text = manifest_to_text(m);
    auto back = manifest_from_text(text);
    REQUIRE(back.ok());
    REQUIRE(back->steps.size() == 2);
    CHECK(back->steps[0].label == a.label);
    CHECK(back->steps[0].squashed);
    CHECK_FALSE(back->steps[0].live);
    CHECK(back->steps[0].paths == a.paths);
    CHECK(back->steps[1].live);
    CHECK(back->steps[1].paths == live.paths);
    // No records, no field: a one-run session's manifest is what it was.
    m.steps.clear();
    CHECK(manifest_to_text(m).find("\"steps\"") == std::string::npos);
}

TEST_CASE("manifest steps: hostile records are refused", "[steps]") {
    CHECK(manifest_from_text(with_steps("[]")).ok());
    CHECK(manifest_from_text(with_steps("[{\"step\":1,\"paths\":[{\"path\":\"a\",\"kind\":\"A\"}]}]")).ok());
    const char* bad[] = {
        "{}",                                                             // not an array
        "[{\"step\":1,\"paths\":[{\"path\":\"../x\",\"kind\":\"A\"}]}]",  // escapes the target
        "[{\"step\":1,\"paths\":[{\"path\":\"/etc\",\"kind\":\"A\"}]}]",  // absolute
        "[{\"step\":1,\"paths\":[{\"path\":\"a//b\",\"kind\":\"A\"}]}]",  // empty part
        "[{\"step\":1,\"paths\":[{\"path\":\"a\",\"kind\":\"X\"}]}]",     // unknown kind
        "[{\"step\":1,\"step\":2}]",                                      // a field twice
        "[{\"step\":2},{\"step\":2}]",                                    // numbers do not go up
        "[{\"step\":1,\"live\":true},{\"step\":2}]",                      // a record after the live one
        "[{\"step\":0}]",                                                 // no step 0
        "[{\"step\":1,\"squashed\":\"yes\"}]",                            // not a boolean
        "[{\"label\":\"x\"}]",                                            // no step
        "[{\"step\":1,\"label\":1}]",                                     // label not a string
    };
    for (const char* b : bad) {
        INFO(b);
        auto r = manifest_from_text(with_steps(b));
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.find("invalid manifest: ") == 0);
    }
    std::string long_label(5000, 'x');
    CHECK_FALSE(manifest_from_text(with_steps("[{\"step\":1,\"label\":\"" + long_label + "\"}]")).ok());
}
