// The control channel from the CLI to a running session's supervisor: a unix
// socket SESSION/control.sock (mode 0600, in the owner-only state dir, which
// the sandbox cannot see), served by the supervisor's poll loop one request
// at a time. A peer of another uid is refused (SO_PEERCRED). Messages:
// helper/sandbox/ipc/control_msg.h.
#pragma once
#include <functional>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/result.h"
#include "helper/sandbox/ipc/control_msg.h"

namespace control {

// The listening socket (a stale one from a crashed supervisor is replaced).
base::Result<base::Fd> listen(const std::string& session_dir);
void remove_socket(const std::string& session_dir);

// Accept one connection, read its request, answer with handler's reply.
// Errors on the connection (a peer of another uid, a malformed or missing
// request) are answered or dropped; the listener stays.
using Handler = std::function<Reply(const Request&)>;
void serve_one(int listen_fd, const Handler& handler);

// Client: send one request to the supervisor of the running session in
// session_dir and wait for its reply (a request in progress holds the next:
// the supervisor serves one at a time). An ok reply, or the supervisor's error.
base::Result<Reply> ask(const std::string& session_dir, const Request& req);
// A checkpoint: the step made (0: no changes), or the supervisor's error.
base::Result<int> checkpoint(const std::string& session_dir, const std::string& label);

}  // namespace control
