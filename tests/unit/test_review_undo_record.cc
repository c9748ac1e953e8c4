#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "capture/patch/manifest.h"
#include "review/apply/undo_record.h"

using capture::Kind;
using capture::Type;
using review::Op;
using review::undo_kind;
using review::walk_less;

TEST_CASE("review undo patch: each apply op maps to the change that reverses it") {
    CHECK(undo_kind(Op::Add, Type::None, Type::File) == Kind::Deleted);
    CHECK(undo_kind(Op::Add, Type::None, Type::Dir) == Kind::Deleted);
    CHECK(undo_kind(Op::Delete, Type::Dir, Type::None) == Kind::Added);
    CHECK(undo_kind(Op::Delete, Type::Symlink, Type::None) == Kind::Added);
    CHECK(undo_kind(Op::Replace, Type::File, Type::File) == Kind::Modified);
    CHECK(undo_kind(Op::Replace, Type::Symlink, Type::Symlink) == Kind::Modified);
    CHECK(undo_kind(Op::Replace, Type::File, Type::Symlink) == Kind::TypeChanged);
    CHECK(undo_kind(Op::Replace, Type::Dir, Type::File) == Kind::TypeChanged);
    CHECK(undo_kind(Op::Replace, Type::File, Type::Dir) == Kind::TypeChanged);
    CHECK(undo_kind(Op::Replace, Type::Dir, Type::Dir) == Kind::OpaqueDir);
    CHECK(undo_kind(Op::InPlace, Type::File, Type::File) == Kind::Modified);
    CHECK(undo_kind(Op::Meta, Type::File, Type::File) == Kind::Metadata);
    CHECK(undo_kind(Op::Meta, Type::Dir, Type::Dir) == Kind::Metadata);
}

TEST_CASE("review undo patch: walk order puts a subtree right after its dir, before later siblings") {
    std::vector<std::string> v = {"a-c", "a/b", "b", "a", "a/b/c", "a0", "a/a", "\xff", "a.txt"};
    std::sort(v.begin(), v.end(), walk_less);
    CHECK(v == std::vector<std::string>{"a", "a/a", "a/b", "a/b/c", "a-c", "a.txt", "a0", "b", "\xff"});
    CHECK_FALSE(walk_less("a", "a"));
    CHECK(walk_less("a", "a/b"));
    CHECK_FALSE(walk_less("a/b", "a"));
}

TEST_CASE("review undo patch: the manifest's kind and undo_store round-trip and stay out of ordinary patches") {
    capture::Manifest m;
    m.format = "layover-patch/1";
    m.target = "/t";
    auto plain = capture::manifest_to_text(m);
    CHECK(plain.find("\"kind\"") == std::string::npos);
    CHECK(plain.find("undo_store") == std::string::npos);
    m.kind = "undo";
    m.undo_store = ".layover-undo/abc123";
    auto back = capture::manifest_from_text(capture::manifest_to_text(m));
    REQUIRE(back.ok());
    CHECK(back->kind == "undo");
    CHECK(back->undo_store == ".layover-undo/abc123");
    auto bad =
        capture::manifest_from_text(R"({"format":"layover-patch/1","target":"/t","kind":3,"changes":[],"base":[]})");
    CHECK_FALSE(bad.ok());
}
