// The control channel's messages (helper/sandbox/control_msg.h): pure.
#include <catch2/catch.hpp>

#include "helper/sandbox/control_msg.h"

TEST_CASE("control: a checkpoint request and its replies round-trip", "[control]") {
    auto q = control::decode_request(control::encode_request({"checkpoint", "fix \"tests\"\n"}));
    REQUIRE(q.ok());
    CHECK(q->op == "checkpoint");
    CHECK(q->label == "fix \"tests\"\n");
    auto a = control::decode_reply(control::encode_reply({true, 7, ""}));
    REQUIRE(a.ok());
    CHECK(a->ok);
    CHECK(a->step == 7);
    auto e = control::decode_reply(control::encode_reply({false, 0, "busy: pid 4 (vim) writes a.txt"}));
    REQUIRE(e.ok());
    CHECK_FALSE(e->ok);
    CHECK(e->error == "busy: pid 4 (vim) writes a.txt");
}

TEST_CASE("control: malformed messages are clear errors", "[control]") {
    for (const char* bad : {"", "{", "[]", "null", "{\"op\": 1}", "{\"op\": \"rm\"}", "{\"op\": \"checkpoint\"} x",
                            "{\"op\": \"checkpoint\", \"label\": []}", "{\"op\": \"checkpoint\",}"}) {
        auto r = control::decode_request(bad);
        INFO(bad);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.rfind("malformed control message: ", 0) == 0);
    }
    CHECK_FALSE(
        control::decode_request("{\"op\": \"checkpoint\", \"label\": \"" + std::string(5000, 'x') + "\"}").ok());
    CHECK_FALSE(control::decode_request(std::string(control::kMaxMessage + 1, ' ')).ok());
    for (const char* bad : {"{}", "{\"ok\": 1}", "{\"ok\": false}", "{\"ok\": true, \"step\": -1}",
                            "{\"ok\": true, \"step\": 10000}", "{\"ok\": true, \"step\": 1.5}"}) {
        INFO(bad);
        CHECK_FALSE(control::decode_reply(bad).ok());
    }
    // Unknown keys are skipped (a newer peer), strictly parsed.
    auto q = control::decode_request("{\"op\": \"checkpoint\", \"new\": {\"a\": [1, 2]}}");
    REQUIRE(q.ok());
    CHECK(q->label.empty());
}

TEST_CASE("control: rollback, undo, revert and fork requests round-trip and are checked", "[control]") {
    for (const auto& q : {control::Request("rollback", "", 0), control::Request("rollback", "", 12),
                          control::Request("undo", ""), control::Request("revert", "", 3),
                          control::Request("fork", "", -1, "best-of.2"), control::Request("fork", "", 4, "b")}) {
        auto back = control::decode_request(control::encode_request(q));
        INFO(control::encode_request(q));
        REQUIRE(back.ok());
        CHECK(back->op == q.op);
        CHECK(back->step == q.step);
        CHECK(back->name == q.name);
        CHECK(back->peer == 0);  // never from the message
    }
    for (const char* bad :
         {"{\"op\": \"rollback\"}", "{\"op\": \"rollback\", \"step\": -1}", "{\"op\": \"rollback\", \"step\": 10000}",
          "{\"op\": \"revert\", \"step\": 0}", "{\"op\": \"revert\", \"step\": \"1\"}", "{\"op\": \"fork\"}",
          "{\"op\": \"fork\", \"name\": \"../x\"}", "{\"op\": \"fork\", \"name\": \"-x\"}",
          "{\"op\": \"fork\", \"name\": \"\"}", "{\"op\": \"fork\", \"name\": 3}",
          "{\"op\": \"squash\", \"step\": 1}"}) {
        auto r = control::decode_request(bad);
        INFO(bad);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().message.rfind("malformed control message: ", 0) == 0);
    }
    auto a = control::decode_reply(control::encode_reply({true, 2, "", 3}));
    REQUIRE(a.ok());
    CHECK(a->step == 2);
    CHECK(a->count == 3);
    CHECK_FALSE(control::decode_reply("{\"ok\": true, \"step\": 1, \"count\": -2}").ok());
}
