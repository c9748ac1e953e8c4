// review::space_needed / space_problem: what staging writes, against what is
// free (attack21: a patch of more than the disk holds filled it, then rolled back).
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "review/apply/space.h"

using capture::Member;
using review::PlanItem;

namespace {

Member file(const std::string& path, uint64_t size) {
    Member m;
    m.kind = Member::Kind::File;
    m.path = path;
    m.size = size;
    return m;
}

}  // namespace

TEST_CASE("apply space: stored data in whole blocks, holes and hard links free, undo copies counted",
          "[review][space]") {
    Member dense = file("a", 5000), empty = file("e", 0), sparse = file("s", 1ull << 40);
    sparse.sparse = {{0, 100}, {1ull << 39, 4096}};
    Member dir;
    dir.kind = Member::Kind::Dir;
    dir.path = "d";
    Member link;
    link.kind = Member::Kind::Hardlink;
    link.path = "d/l";
    link.link_target = "a";
    std::vector<PlanItem> items(4);
    items[0].member = &dense;          // 2 blocks
    items[1].member = &empty;          // none
    items[2].member = &dir;            // its first block
    items[2].tree = {&link, &sparse};  // 1 + 1 blocks; the link takes no inode
    items[3].member = &dense;          // an in-place update: the new content and the original's copy
    items[3].unit.op = review::Op::InPlace;
    items[3].before.size = 1;
    auto need = review::space_needed(items, 4096);
    CHECK(need.bytes == (2 + 1 + 2 + 2 + 1) * 4096);
    CHECK(need.entries == 6);
    // A partial apply stages its content, not the member's.
    PlanItem part;
    part.member = &dense;
    part.content = std::make_shared<const std::string>(10, 'x');
    need = review::space_needed({part}, 4096);
    CHECK(need.bytes == 4096);
    CHECK(need.entries == 1);
    // Sizes near 2^64 saturate, never wrap to a small need.
    Member huge = file("h", UINT64_MAX - 10);
    std::vector<PlanItem> two(2);
    two[0].member = &huge;
    two[1].member = &huge;
    CHECK(review::space_needed(two, 4096).bytes == UINT64_MAX);
}

TEST_CASE("apply space: long symlink targets and xattrs take blocks too (attack22)", "[review][space]") {
    Member shortlink, longlink, tagged = file("t", 0), small = file("s", 0);
    shortlink.kind = longlink.kind = Member::Kind::Symlink;
    shortlink.link_target = std::string(59, 'x');  // kept in the inode
    longlink.link_target = std::string(4000, 'x');
    tagged.xattrs["user.a"] = std::string(5000, 'v');
    small.xattrs["user.xdg.origin.url"] = "https://example.org/";  // kept in the inode
    std::vector<PlanItem> items(4);
    items[0].member = &shortlink;
    items[1].member = &longlink;
    items[2].member = &tagged;
    items[3].member = &small;
    auto need = review::space_needed(items, 4096);
    CHECK(need.bytes == (0 + 1 + 2 + 0) * 4096);
    CHECK(need.entries == 4);
    // A partial apply's content keeps the member's xattrs.
    PlanItem part;
    part.member = &tagged;
    part.content = std::make_shared<const std::string>(10, 'x');
    CHECK(review::space_needed({part}, 4096).bytes == 3 * 4096);
    // A mode change of an existing dir makes nothing; an xattr it gains may take a block.
    Member dir;
    dir.kind = Member::Kind::Dir;
    PlanItem meta;
    meta.member = &dir;
    meta.unit.op = review::Op::Meta;
    need = review::space_needed({meta}, 4096);
    CHECK(need.bytes == 0);
    CHECK(need.entries == 0);
    dir.xattrs["user.big"] = std::string(100, 'v');
    CHECK(review::space_needed({meta}, 4096).bytes == 4096);
}

TEST_CASE("apply space: the refusal names what is free and what the apply needs", "[review][space]") {
    review::SpaceNeed need{64ull << 20, 3};
    CHECK(review::space_problem(need, 64ull << 20, 3).empty());
    CHECK(review::space_problem(need, 8ull << 20, UINT64_MAX) ==
          "the target's filesystem has 8.0 MiB free, and this apply writes 64 MiB; nothing was applied (free "
          "space, or leave changes out with --exclude)");
    CHECK(review::space_problem(need, UINT64_MAX, 2) ==
          "the target's filesystem has 2 free inodes, and this apply makes 3 entries; nothing was applied (free "
          "some, or leave changes out with --exclude)");
}
