// The control channel of a running session (helper/sandbox/control.h): one
// request and one reply per connection, each a JSON object in one
// SOCK_SEQPACKET message. Pure: the decoders read untrusted bytes (the
// tests fuzz them) and never throw.
//   request  {"op": "checkpoint", "label": "..."}
//   reply    {"ok": true, "step": N}   (N 0: no changes, no step made)
//            {"ok": false, "error": "one line"}
#pragma once
#include <string>
#include <string_view>

#include "helper/base/result.h"

namespace control {

constexpr size_t kMaxMessage = 16384;

struct Request {
    std::string op;  // "checkpoint"
    std::string label;
};

struct Reply {
    bool ok = false;
    int step = 0;
    std::string error;
};

std::string encode_request(const Request& r);
base::Result<Request> decode_request(std::string_view text);
std::string encode_reply(const Reply& r);
base::Result<Reply> decode_reply(std::string_view text);

}  // namespace control
