#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "review/txn/txn.h"

namespace {

review::EntryStat st(const std::string& path, capture::Type type, uint64_t ino) {
    review::EntryStat s;
    s.path = path;
    s.exists = true;
    s.type = type;
    s.mode = 0755;
    s.ino = ino;
    s.size = 4096;
    s.mtime_ns = -1234567890123;  // before 1970
    s.ctime_ns = 1700000000123456789;
    return s;
}

}  // namespace

TEST_CASE("review txn: the hand-written record round-trips every field, after_tree included") {
    review::Txn t;
    t.kind = review::TxnKind::Apply;
    t.id = "0a1b2c";
    t.target = "/home/u/\"quoted\" \\ dir\x01";
    t.dev = 0xfd00;
    t.ino = 18446744073709551615ull;
    t.state = review::TxnState::Done;
    t.source = "/tmp/p\xfe.tar.zst";
    t.created = "2024-01-02T03:04:05Z";
    t.store = ".layover-undo/0a1b2c";
    review::Unit u;
    u.path = "gen";
    u.op = review::Op::Add;
    u.tmp = ".layover-tmp.0a1b2c.1";
    u.new_ino = 77;
    u.after = st("gen", capture::Type::Dir, 77);
    for (int i = 0; i < 3; i++) u.after_tree.push_back(st("d/f\n" + std::to_string(i), capture::Type::File, 100 + i));
    u.after_tree.push_back(st("d", capture::Type::Dir, 99));
    t.units.push_back(u);
    review::Unit m;
    m.path = "x\xff";
    m.op = review::Op::Meta;
    m.old_ino = 5;
    m.old_mode = 0600;
    m.old_mtime_ns = 42;
    m.old_xattrs["user.a"] = std::string("\0\1", 2);
    m.old_xattrs["user.b"] = "";
    t.units.push_back(m);

    std::string text = review::txn_to_json(t);
    auto parsed = nlohmann::json::parse(text);  // valid JSON, same keys as the nlohmann-built record had
    CHECK(parsed.at("format") == "layover-undo/1");
    CHECK(parsed.at("target").get<std::string>().find("quoted") != std::string::npos);
    CHECK(parsed.at("units").size() == 2);
    CHECK(parsed.at("units")[0].at("after_tree").size() == 4);

    auto back = review::txn_from_json(text);
    REQUIRE(back.ok());
    CHECK(back->target == t.target);
    CHECK(back->source == t.source);
    CHECK(back->dev == t.dev);
    CHECK(back->ino == t.ino);
    CHECK(back->created == t.created);
    REQUIRE(back->units.size() == 2);
    const auto& bu = back->units[0];
    CHECK(bu.op == review::Op::Add);
    CHECK(bu.tmp == u.tmp);
    CHECK(bu.new_ino == 77);
    CHECK(bu.after.type == capture::Type::Dir);
    REQUIRE(bu.after_tree.size() == 4);
    for (size_t i = 0; i < 4; i++) {
        CHECK(bu.after_tree[i].path == u.after_tree[i].path);
        CHECK(bu.after_tree[i].type == u.after_tree[i].type);
        CHECK(bu.after_tree[i].ino == u.after_tree[i].ino);
        CHECK(bu.after_tree[i].mode == 0755);
        CHECK(bu.after_tree[i].size == 4096);
        CHECK(bu.after_tree[i].mtime_ns == -1234567890123);
        CHECK(bu.after_tree[i].ctime_ns == 1700000000123456789);
        CHECK(bu.after_tree[i].exists);
    }
    const auto& bm = back->units[1];
    CHECK(bm.path == m.path);
    CHECK(bm.op == review::Op::Meta);
    CHECK(bm.old_mode == 0600);
    CHECK(bm.old_mtime_ns == 42);
    CHECK(bm.old_xattrs == m.old_xattrs);
    CHECK_FALSE(bm.after.exists);
}

TEST_CASE("review txn: a name that needs escaping stays valid JSON and is refused by its rule, not as malformed") {
    review::Txn t;
    t.id = "abc";
    t.state = review::TxnState::Done;
    t.store = ".layover-undo/abc";
    review::Unit u;
    u.path = "a";
    u.slot = "x\"y\\z";
    t.units.push_back(u);
    auto back = review::txn_from_json(review::txn_to_json(t));
    REQUIRE_FALSE(back.ok());
    CHECK(back.error().message == "unsafe slot in undo record");
}

TEST_CASE("review txn: kind and state are read as their enums; an unknown one is refused") {
    review::Txn t;
    t.id = "0a1b2c";
    t.store = ".layover-undo/0a1b2c";
    for (auto kind : {review::TxnKind::Apply, review::TxnKind::Undo})
        for (auto state : {review::TxnState::Staging, review::TxnState::Committing, review::TxnState::Done}) {
            t.kind = kind;
            t.state = state;
            auto back = review::txn_from_json(review::txn_to_json(t));
            REQUIRE(back.ok());
            CHECK(back->kind == kind);
            CHECK(back->state == state);
        }
    std::string text = review::txn_to_json(t);
    auto swap = [&](const std::string& from, const std::string& to) {
        std::string s = text;
        s.replace(s.find(from), from.size(), to);
        return review::txn_from_json(s);
    };
    CHECK_FALSE(swap("\"state\":\"done\"", "\"state\":\"finished\"").ok());
    CHECK_FALSE(swap("\"kind\":\"undo\"", "\"kind\":\"redo\"").ok());
}
