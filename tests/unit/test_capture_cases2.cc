// The classifier over (upper type x lower type) cases with upper socket,
// whiteout or opaque dir (the others: test_capture_cases.cc), on synthetic
// trees: forged xattr whiteouts and opaque markers, real fifos and sockets.
// `make check-cases` requires each "case: upper=X lower=Y" to appear here.
#include <catch2/catch.hpp>

#include "tests/unit/capture_scan_util.h"

using capture::Kind;
using capture::Type;

TEST_CASE("capture classify case: upper=socket lower=none") {
    auto r = scan_case("socket", "none");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Added);
    CHECK(c.type == Type::Socket);
    CHECK(c.old_type == Type::None);
    CHECK(c.captured == false);
}

TEST_CASE("capture classify case: upper=socket lower=file") {
    auto r = scan_case("socket", "file:lower data\n");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Socket);
    CHECK(c.old_type == Type::File);
    CHECK(c.captured == false);
}

TEST_CASE("capture classify case: upper=socket lower=dir") {
    auto r = scan_case("socket", "dir");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Socket);
    CHECK(c.old_type == Type::Dir);
    CHECK(c.captured == false);
}

TEST_CASE("capture classify case: upper=socket lower=symlink") {
    auto r = scan_case("socket", "symlink:low-target");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Socket);
    CHECK(c.old_type == Type::Symlink);
    CHECK(c.captured == false);
}

TEST_CASE("capture classify case: upper=socket lower=fifo") {
    auto r = scan_case("socket", "fifo");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Socket);
    CHECK(c.old_type == Type::Fifo);
    CHECK(c.captured == false);
}

TEST_CASE("capture classify case: upper=socket lower=socket") {
    auto r = scan_case("socket", "socket");
    CHECK(r.items.empty());
}

TEST_CASE("capture classify case: upper=whiteout lower=none") {
    auto r = scan_case("whiteout", "none");
    CHECK(r.items.empty());
}

TEST_CASE("capture classify case: upper=whiteout lower=file") {
    auto r = scan_case("whiteout", "file:lower data\n");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Deleted);
    CHECK(c.type == Type::None);
    CHECK(c.old_type == Type::File);
    CHECK(c.captured == true);
    CHECK(r.items[0].whiteout);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=whiteout lower=dir") {
    auto r = scan_case("whiteout", "dir");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Deleted);
    CHECK(c.type == Type::None);
    CHECK(c.old_type == Type::Dir);
    CHECK(c.captured == true);
    CHECK(r.items[0].whiteout);
    CHECK(has_base(r, "e/old-child"));
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=whiteout lower=symlink") {
    auto r = scan_case("whiteout", "symlink:low-target");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Deleted);
    CHECK(c.type == Type::None);
    CHECK(c.old_type == Type::Symlink);
    CHECK(c.captured == true);
    CHECK(r.items[0].whiteout);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=whiteout lower=fifo") {
    auto r = scan_case("whiteout", "fifo");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Deleted);
    CHECK(c.type == Type::None);
    CHECK(c.old_type == Type::Fifo);
    CHECK(c.captured == true);
    CHECK(r.items[0].whiteout);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=whiteout lower=socket") {
    auto r = scan_case("whiteout", "socket");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Deleted);
    CHECK(c.type == Type::None);
    CHECK(c.old_type == Type::Socket);
    CHECK(c.captured == true);
    CHECK(r.items[0].whiteout);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=opaque lower=none") {
    auto r = scan_case("opaque", "none");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Added);
    CHECK(c.type == Type::Dir);
    CHECK(c.old_type == Type::None);
    CHECK(c.captured == true);
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[1].change.path == "e/new-child");
    CHECK(r.items[1].change.kind == Kind::Added);
    CHECK(base_absent(r, "e"));
}

TEST_CASE("capture classify case: upper=opaque lower=file") {
    auto r = scan_case("opaque", "file:lower data\n");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Dir);
    CHECK(c.old_type == Type::File);
    CHECK(c.captured == true);
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[1].change.path == "e/new-child");
    CHECK(r.items[1].change.kind == Kind::Added);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=opaque lower=dir") {
    // Compared as a merged dir: the dir itself is no change (same mode), the
    // real child it lacks is deleted, its own child added.
    auto r = scan_case("opaque", "dir");
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[0].change.path == "e/new-child");
    CHECK(r.items[0].change.kind == Kind::Added);
    CHECK(base_absent(r, "e/new-child"));
    const auto& c = r.items[1].change;
    CHECK(c.path == "e/old-child");
    CHECK(c.kind == Kind::Deleted);
    CHECK(c.old_type == Type::File);
    CHECK(r.items[1].whiteout);
    CHECK_FALSE(r.items[1].opaque);
    CHECK(has_base(r, "e/old-child"));
    CHECK_FALSE(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=opaque lower=symlink") {
    auto r = scan_case("opaque", "symlink:low-target");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Dir);
    CHECK(c.old_type == Type::Symlink);
    CHECK(c.captured == true);
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[1].change.path == "e/new-child");
    CHECK(r.items[1].change.kind == Kind::Added);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=opaque lower=fifo") {
    auto r = scan_case("opaque", "fifo");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Dir);
    CHECK(c.old_type == Type::Fifo);
    CHECK(c.captured == true);
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[1].change.path == "e/new-child");
    CHECK(r.items[1].change.kind == Kind::Added);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=opaque lower=socket") {
    auto r = scan_case("opaque", "socket");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Dir);
    CHECK(c.old_type == Type::Socket);
    CHECK(c.captured == true);
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[1].change.path == "e/new-child");
    CHECK(r.items[1].change.kind == Kind::Added);
    CHECK(has_base(r, "e"));
}
