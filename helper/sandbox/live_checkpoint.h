// The checkpoint of a running session, served by its supervisor
// (helper/sandbox/control.h; docs/history.md, "The freeze rule").
#pragma once
#include <sys/types.h>

#include "helper/sandbox/control_msg.h"

struct PreparedRun;

class LiveCheckpoint {
public:
    explicit LiveCheckpoint(PreparedRun& run) : run_(run) {}
    // One request; init is the sandbox's init (host pid), -1 before it runs.
    control::Reply serve(const control::Request& req, pid_t init);

private:
    PreparedRun& run_;
};
