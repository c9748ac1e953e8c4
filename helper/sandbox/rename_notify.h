// The supervisor's end of rename interception: it receives each rename,
// renameat and renameat2 the sandbox makes (a seccomp user notification),
// reads its arguments once, and has rename_worker answer it inside the
// sandbox's view. Anything it cannot read or decide is answered "continue":
// the kernel then runs the call exactly as the task asked, with the task's
// own rights, so a racing or hostile task can only confuse itself.
#pragma once
#include <optional>

#include "helper/base/child.h"
#include "helper/base/fd.h"

class RenameNotify {
public:
    explicit RenameNotify(base::Fd listener) : listener_(std::move(listener)) {}
    int fd() const { return listener_.get(); }
    // One pending notification (call on POLLIN). False once the listener is
    // done (every sandboxed process gone).
    bool handle_one();

private:
    base::Fd listener_;
    std::optional<base::Child> worker_;
    base::Fd worker_sock_;
    bool worker_failed_ = false;
};
