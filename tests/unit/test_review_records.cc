// Undo-record retention, age parsing and the session life-cycle states (pure).
#include <catch2/catch.hpp>

#include "helper/base/clock.h"
#include "helper/store/session/session.h"
#include "review/apply/records.h"

TEST_CASE("review records: retention keeps the newest N and the young, prunes the 21st old record") {
    review::Retention r;  // 20 newest, 30 days
    const int64_t now = 1700000000, day = 86400;
    std::vector<int64_t> old(21, now - 40 * day);
    auto p = review::select_pruned(old, r, now);
    REQUIRE(p.size() == 1);
    CHECK(p[0] == 20);
    std::vector<int64_t> young(25, now - day);
    CHECK(review::select_pruned(young, r, now).empty());  // younger than 30 days: all kept
    r.keep_days = 0;
    CHECK(review::select_pruned(young, r, now).size() == 5);
    r.keep = 0;
    r.keep_days = 30;
    std::vector<int64_t> mixed{now - day, now - 31 * day, -1};
    CHECK(review::select_pruned(mixed, r, now) == std::vector<size_t>{1, 2});  // unreadable time counts as old
}

TEST_CASE("review records: ages and RFC 3339 times parse; bad ones are refused") {
    CHECK(review::parse_age("30d") == 30 * 86400);
    CHECK(review::parse_age("12h") == 12 * 3600);
    CHECK(review::parse_age("90m") == 90 * 60);
    CHECK(review::parse_age("45s") == 45);
    CHECK(review::parse_age("2w") == 14 * 86400);
    CHECK(review::parse_age("7") == 7 * 86400);
    CHECK(review::parse_age("0s") == 0);
    for (const char* bad : {"", "d", "30x", "-1d", "3.5d", "30dd", "99999999999999999999d"})
        CHECK(review::parse_age(bad) == -1);
    CHECK(base::parse_rfc3339("1970-01-02T00:00:00Z") == 86400);
    CHECK(base::parse_rfc3339("2026-11-25T10:00:00.5Z") > 0);
    CHECK(base::parse_rfc3339("yesterday") == -1);
    CHECK(base::parse_rfc3339("2026-13-01T00:00:00Z") == -1);
}

TEST_CASE("review records: the undo command names the target, quoted for a shell") {
    CHECK(review::undo_command("/home/me/proj") == "layover undo --last --target /home/me/proj");
    CHECK(review::undo_command("/home/me/my proj") == "layover undo --last --target '/home/me/my proj'");
    CHECK(review::undo_command("/x/it's") == "layover undo --last --target '/x/it'\\''s'");
}

TEST_CASE("session states: running, crashed, applied, saved, empty, kept") {
    session::Meta m;
    m.status = "exited";
    CHECK(session::state_from(true, m) == "running");
    CHECK(session::state_from(false, m) == "kept");  // count unknown: kept
    m.changes = 0;
    CHECK(session::state_from(false, m) == "empty");
    m.changes = 3;
    CHECK(session::state_from(false, m) == "kept");
    m.saved = "/home/me/p.tar.zst";
    CHECK(session::state_from(false, m) == "saved");
    m.applied = "2026-11-25T10:00:00Z";
    CHECK(session::state_from(false, m) == "applied");
    m.status = "running";
    CHECK(session::state_from(false, m) == "crashed");
}
