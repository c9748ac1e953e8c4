// Directory renames the overlay refuses. overlayfs mounted with userxattr
// (all an unprivileged user may use) cannot record a moved lower directory
// (no redirect_dir), so rename(2) of a directory from the real tree fails
// with EXDEV. The supervisor is notified of every rename (seccomp user
// notification, rename_notify.h) and forwards it here: a process in the
// sandbox's user and mount namespaces holding no capability, so it can do
// nothing the sandbox itself could not. It answers "continue" (let the
// kernel run the call as asked) unless the source is a directory whose
// rename fails with EXDEV; then it moves it as `mv` does: copy, then delete.
#pragma once
#include <sys/types.h>

#include <string>
#include <utility>

#include "helper/base/child.h"
#include "helper/base/fd.h"
#include "helper/base/result.h"

namespace rename_worker {

constexpr int kContinue = 1;  // a call()'s answer besides 0 and -errno

// Fork the worker into the user and mount namespaces of `pid` (a host pid of
// a sandboxed process). Returns it and the socket to talk to it.
base::Result<std::pair<base::Child, base::Fd>> start(pid_t pid);

// One request: renameat2(olddir, from, newdir, to, flags) in the sandbox's
// view. Returns 0, -errno or kContinue.
base::Result<int> call(int sock, int olddir, int newdir, unsigned flags, const std::string& from,
                       const std::string& to);

// What the worker does with one request (exposed for unit tests, which run
// it in a plain directory tree).
int handle(int olddir, const std::string& from, int newdir, const std::string& to, unsigned flags);

}  // namespace rename_worker
