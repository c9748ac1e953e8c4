#include <catch2/catch.hpp>
#include <string>

#include "review/prompt/walk_conflicts.h"

namespace {

review::ConflictStep step(const review::WalkConflicts& all, const std::string& path, review::OnConflict on) {
    review::WalkOptions o;
    o.conflicts = &all;
    o.on_conflict = on;
    return review::conflict_step(path, o);
}

void add(review::WalkConflicts& all, const std::string& path, bool hard) {
    all.emplace(path, review::Conflict{path, "content changed on the target", hard});
}

}  // namespace

TEST_CASE("walk conflicts: a path's own and those beneath it, never a sibling that sorts between", "[walk]") {
    using review::ConflictStep;
    using review::OnConflict;
    review::WalkConflicts all;
    add(all, "a.b", false);  // sorts after "a", before "a/b"
    add(all, "a0", false);   // sorts after every "a/..."
    add(all, "ab", false);
    CHECK(step(all, "a", OnConflict::Forced) == ConflictStep::None);
    add(all, "a/b", false);
    CHECK(step(all, "a", OnConflict::Forced) == ConflictStep::Whole);
    CHECK(step(all, "a", OnConflict::Skip) == ConflictStep::Skip);
    CHECK(step(all, "a/b", OnConflict::Forced) == ConflictStep::Whole);
    CHECK(step(all, "a/bc", OnConflict::Forced) == ConflictStep::None);
    CHECK(step(all, "a.b", OnConflict::Forced) == ConflictStep::Whole);
}

TEST_CASE("walk conflicts: a hard one anywhere beneath leaves the dir out, not asked about", "[walk]") {
    // attack30: only the first beneath was weighed (and named); a hard one
    // after it was asked about whole, then refused the apply.
    review::WalkConflicts all;
    add(all, "d/a", false);
    add(all, "d/z", true);
    CHECK(step(all, "d", review::OnConflict::Prompt) == review::ConflictStep::Skip);
    CHECK(step(all, "d/a", review::OnConflict::Prompt) == review::ConflictStep::Whole);
}
