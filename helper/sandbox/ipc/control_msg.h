// The control channel of a running session (helper/sandbox/ipc/control.h): one
// request and one reply per connection, each a JSON object in one
// SOCK_SEQPACKET message. Pure: the decoders read untrusted bytes (the
// tests fuzz them) and never throw.
//   request  {"op": "checkpoint", "label": "..."}
//            {"op": "rollback", "step": N}     the view as of step N
//            {"op": "undo"}                    rollback --undo
//            {"op": "revert", "step": N}       take back step N alone
//            {"op": "fork", "name": "NEW", "step": N}   (no step: all, the live changes frozen first)
//   reply    {"ok": true, "step": N, "count": K}   (N 0: no changes, no step made;
//            K: the steps a rollback set aside or an undo brought back)
//            {"ok": false, "error": "one line"}
#pragma once
#include <string>
#include <string_view>
#include <utility>

#include "helper/base/result.h"

namespace control {

constexpr size_t kMaxMessage = 16384;

struct Request {
    Request() = default;
    Request(std::string o, std::string l, int s = -1, std::string n = "")
        : op(std::move(o)), label(std::move(l)), step(s), name(std::move(n)) {}
    std::string op;  // "checkpoint", "rollback", "undo", "revert", "fork"
    std::string label;
    int step = -1;     // rollback, revert, fork --at; -1: none
    std::string name;  // fork: the new session's name
    int peer = 0;      // not in the message: the client's pid (SO_PEERCRED)
};

struct Reply {
    Reply() = default;
    Reply(bool o, int s, std::string e, int c = 0) : ok(o), step(s), error(std::move(e)), count(c) {}
    bool ok = false;
    int step = 0;
    std::string error;
    int count = 0;
};

std::string encode_request(const Request& r);
base::Result<Request> decode_request(std::string_view text);
std::string encode_reply(const Reply& r);
base::Result<Reply> decode_reply(std::string_view text);

}  // namespace control
