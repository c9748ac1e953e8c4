// The classifier over (upper type x lower type) cases with upper file, dir,
// symlink or fifo (socket, whiteout and opaque: test_capture_cases2.cc), on synthetic
// trees: forged xattr whiteouts and opaque markers, real fifos and sockets.
// `make check-cases` requires each "case: upper=X lower=Y" to appear here.
#include <catch2/catch.hpp>

#include "tests/unit/capture_scan_util.h"

using capture::Kind;
using capture::Type;

TEST_CASE("capture classify case: upper=file lower=none") {
    auto r = scan_case("file:upper data\n", "none");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Added);
    CHECK(c.type == Type::File);
    CHECK(c.old_type == Type::None);
    CHECK(c.captured == true);
    CHECK(base_absent(r, "e"));
}

TEST_CASE("capture classify case: upper=file lower=file") {
    auto r = scan_case("file:upper data\n", "file:lower data\n");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Modified);
    CHECK(c.type == Type::File);
    CHECK(c.old_type == Type::File);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=file lower=dir") {
    auto r = scan_case("file:upper data\n", "dir");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::File);
    CHECK(c.old_type == Type::Dir);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=file lower=symlink") {
    auto r = scan_case("file:upper data\n", "symlink:low-target");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::File);
    CHECK(c.old_type == Type::Symlink);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=file lower=fifo") {
    auto r = scan_case("file:upper data\n", "fifo");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::File);
    CHECK(c.old_type == Type::Fifo);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=file lower=socket") {
    auto r = scan_case("file:upper data\n", "socket");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::File);
    CHECK(c.old_type == Type::Socket);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=dir lower=none") {
    auto r = scan_case("dir", "none");
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

TEST_CASE("capture classify case: upper=dir lower=file") {
    auto r = scan_case("dir", "file:lower data\n");
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

TEST_CASE("capture classify case: upper=dir lower=dir") {
    auto r = scan_case("dir", "dir");
    REQUIRE(r.items.size() == 1);
    CHECK(r.items[0].change.path == "e/new-child");
}

TEST_CASE("capture classify case: upper=dir lower=symlink") {
    auto r = scan_case("dir", "symlink:low-target");
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

TEST_CASE("capture classify case: upper=dir lower=fifo") {
    auto r = scan_case("dir", "fifo");
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

TEST_CASE("capture classify case: upper=dir lower=socket") {
    auto r = scan_case("dir", "socket");
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

TEST_CASE("capture classify case: upper=symlink lower=none") {
    auto r = scan_case("symlink:up-target", "none");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Added);
    CHECK(c.type == Type::Symlink);
    CHECK(c.old_type == Type::None);
    CHECK(c.captured == true);
    CHECK(base_absent(r, "e"));
}

TEST_CASE("capture classify case: upper=symlink lower=file") {
    auto r = scan_case("symlink:up-target", "file:lower data\n");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Symlink);
    CHECK(c.old_type == Type::File);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=symlink lower=dir") {
    auto r = scan_case("symlink:up-target", "dir");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Symlink);
    CHECK(c.old_type == Type::Dir);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=symlink lower=symlink") {
    auto r = scan_case("symlink:up-target", "symlink:low-target");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Modified);
    CHECK(c.type == Type::Symlink);
    CHECK(c.old_type == Type::Symlink);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=symlink lower=fifo") {
    auto r = scan_case("symlink:up-target", "fifo");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Symlink);
    CHECK(c.old_type == Type::Fifo);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=symlink lower=socket") {
    auto r = scan_case("symlink:up-target", "socket");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Symlink);
    CHECK(c.old_type == Type::Socket);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=fifo lower=none") {
    auto r = scan_case("fifo", "none");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::Added);
    CHECK(c.type == Type::Fifo);
    CHECK(c.old_type == Type::None);
    CHECK(c.captured == true);
    CHECK(base_absent(r, "e"));
}

TEST_CASE("capture classify case: upper=fifo lower=file") {
    auto r = scan_case("fifo", "file:lower data\n");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Fifo);
    CHECK(c.old_type == Type::File);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=fifo lower=dir") {
    auto r = scan_case("fifo", "dir");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Fifo);
    CHECK(c.old_type == Type::Dir);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=fifo lower=symlink") {
    auto r = scan_case("fifo", "symlink:low-target");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Fifo);
    CHECK(c.old_type == Type::Symlink);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}

TEST_CASE("capture classify case: upper=fifo lower=fifo") {
    auto r = scan_case("fifo", "fifo");
    CHECK(r.items.empty());
}

TEST_CASE("capture classify case: upper=fifo lower=socket") {
    auto r = scan_case("fifo", "socket");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::TypeChanged);
    CHECK(c.type == Type::Fifo);
    CHECK(c.old_type == Type::Socket);
    CHECK(c.captured == true);
    CHECK(has_base(r, "e"));
}
