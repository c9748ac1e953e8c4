// attack36: a rollback to the step the session is at, whose live upper held
// only a dead rename worker's leftover (swept before the freeze, so nothing
// was frozen), went on as a rollback that set nothing aside: it replaced the
// earlier rollback's set-aside steps with none while saying "nothing was set
// aside", and `rollback --undo` then had nothing to bring back.
#include <sys/stat.h>

#include <catch2/catch.hpp>

#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/rename_temps.h"
#include "tests/unit/capture_tree.h"

TEST_CASE("rollback: to the current step with only a worker's leftover live keeps the earlier rollback's steps",
          "[steps]") {
    testtree::TempDir t;
    std::string s = t.path + "/sessions/s", target = t.path + "/target";
    testtree::make(target, "dir");
    testtree::make(t.path + "/sessions", "dir");
    testtree::make(s, "dir");
    testtree::make(s + "/upper", "dir");
    for (int i = 1; i <= 3; i++) {
        testtree::make(s + "/upper/f" + std::to_string(i) + ".txt", "file:" + std::to_string(i) + "\n");
        auto n = steps::freeze_live(s, target, "2026-11-28T04:00:00Z");
        REQUIRE(n.ok());
        REQUIRE(n.value() == i);
    }
    auto moved = steps::rollback(s, 2, target);
    REQUIRE(moved.ok());
    REQUIRE(moved.value() == 1);  // step 3 set aside
    auto key = rename_temps::key_for_run(s);
    REQUIRE(key.ok());
    REQUIRE(::mkdir((s + "/upper/" + rename_temps::temp_name(key.value(), 1)).c_str(), 0700) == 0);
    moved = steps::rollback(s, 2, target);
    REQUIRE(moved.ok());
    CHECK(moved.value() == 0);
    auto back = steps::rollback_undo(s);
    REQUIRE(back.ok());  // before: "nothing to undo: the rollback to step 2 kept no layers"
    CHECK(back.value() == 1);
    auto top = steps::layer_path(s, 3);
    REQUIRE(top.ok());
    CHECK(testtree::read_text(top.value() + "/f3.txt") == "3\n");
}
