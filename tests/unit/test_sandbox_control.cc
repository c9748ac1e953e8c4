// The control channel's messages (helper/sandbox/ipc/control_msg.h): pure; and
// the socket's one-at-a-time serving (helper/sandbox/ipc/control.h).
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>

#include "helper/base/fd.h"
#include "helper/sandbox/ipc/control.h"
#include "helper/sandbox/ipc/control_msg.h"
#include "tests/unit/capture_tree.h"

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

namespace {

// A client of DIR/control.sock that has sent one checkpoint request.
base::Fd send_checkpoint(const std::string& dir) {
    base::Fd s(::socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un a = {};
    a.sun_family = AF_UNIX;
    std::string p = dir + "/control.sock";
    std::memcpy(a.sun_path, p.data(), p.size());
    REQUIRE(::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    std::string m = control::encode_request({"checkpoint", "x"});
    REQUIRE(::send(s.get(), m.data(), m.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(m.size()));
    return s;
}

}  // namespace

TEST_CASE("control: a request whose client gave up waiting is dropped unserved; a waiting one is served", "[control]") {
    testtree::TempDir t;
    auto l = control::listen(t.path);
    REQUIRE(l.ok());
    int served = 0;
    control::Handler h = [&](const control::Request&) {
        served++;
        return control::Reply{true, 5, ""};
    };
    auto client = [&](bool stay) {
        base::Fd s = send_checkpoint(t.path);
        if (!stay) s.reset();  // gave up (the busy error) before the supervisor got to it
        return s;
    };
    client(false);
    control::serve_one(l->get(), h);
    CHECK(served == 0);
    base::Fd waiting = client(true);
    control::serve_one(l->get(), h);
    CHECK(served == 1);
    char buf[256];
    ssize_t n = ::recv(waiting.get(), buf, sizeof buf, 0);
    REQUIRE(n > 0);
    auto r = control::decode_reply(std::string(buf, static_cast<size_t>(n)));
    REQUIRE(r.ok());
    CHECK(r->step == 5);
}

TEST_CASE("control: a full fd table answers the client and drains the listener (no busy loop)", "[control]") {
    // accept() failing with EMFILE left the connection queued: the listener
    // stayed readable and the supervisor's poll loop woke forever. A spare
    // fd, closed for the moment, lets serve_one take the connection and
    // answer that the supervisor is out of file descriptors.
    testtree::TempDir t;
    auto l = control::listen(t.path);
    REQUIRE(l.ok());
    base::Fd s = send_checkpoint(t.path);
    int served = 0;
    control::Handler h = [&](const control::Request&) {
        served++;
        return control::Reply{true, 5, ""};
    };
    struct rlimit was = {};
    REQUIRE(::getrlimit(RLIMIT_NOFILE, &was) == 0);
    int lowest = ::open("/dev/null", O_RDONLY | O_CLOEXEC);  // the next fd the table would give
    REQUIRE(lowest >= 0);
    ::close(lowest);
    struct rlimit full = {static_cast<rlim_t>(lowest), was.rlim_max};
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &full) == 0);
    CHECK(::open("/dev/null", O_RDONLY | O_CLOEXEC) == -1);  // the table is full
    control::serve_one(l->get(), h);
    REQUIRE(::setrlimit(RLIMIT_NOFILE, &was) == 0);
    CHECK(served == 0);
    struct pollfd q = {l->get(), POLLIN, 0};
    CHECK(::poll(&q, 1, 0) == 0);  // nothing left queued: poll sleeps again
    char buf[512];
    ssize_t n = ::recv(s.get(), buf, sizeof buf, MSG_DONTWAIT);
    REQUIRE(n > 0);
    auto r = control::decode_reply(std::string(buf, static_cast<size_t>(n)));
    REQUIRE(r.ok());
    CHECK_FALSE(r->ok);
    CHECK(r->error.find("out of file descriptors") != std::string::npos);
    // With room again, the next request is served as before.
    base::Fd s2 = send_checkpoint(t.path);
    control::serve_one(l->get(), h);
    CHECK(served == 1);
}
