// One message with fds (SCM_RIGHTS) over a SOCK_SEQPACKET socket: the
// child's seccomp listener to the supervisor [sync 5], and the task's dirfds
// from the supervisor to the rename worker.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "helper/sandbox/common/sync.h"

namespace fd_pass {

bool send(int sock, const std::string& data, const std::vector<int>& fds);
// One message of at most max bytes; the fds that came with it (at most 4,
// close-on-exec) in *fds. Returns recvmsg's result.
ssize_t recv(int sock, std::string* data, size_t max, std::vector<base::Fd>* fds);

}  // namespace fd_pass
