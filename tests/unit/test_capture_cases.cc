// The classifier over every (upper type x lower type) case, on synthetic
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
    auto r = scan_case("opaque", "dir");
    REQUIRE(r.items.size() >= 1);
    const auto& c = r.items[0].change;
    CHECK(c.path == "e");
    CHECK(c.kind == Kind::OpaqueDir);
    CHECK(c.type == Type::Dir);
    CHECK(c.old_type == Type::Dir);
    CHECK(c.captured == true);
    CHECK(r.items[0].opaque);
    CHECK(has_base(r, "e/old-child"));
    REQUIRE(r.items.size() == 2);
    CHECK(r.items[1].change.path == "e/new-child");
    CHECK(r.items[1].change.kind == Kind::Added);
    CHECK(has_base(r, "e"));
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
