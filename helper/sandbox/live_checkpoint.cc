#include "helper/sandbox/live_checkpoint.h"

#include "helper/sandbox/prepare.h"

control::Reply LiveCheckpoint::serve(const control::Request& req, pid_t init) {
    (void)req;
    (void)init;
    return {false, 0,
            "session '" + run_.meta.name +
                "' is running, and the freeze of a running session's mount is not built yet; stop the session "
                "(let its command exit, with --on-exit keep), then run 'layover checkpoint " +
                run_.meta.name + "'"};
}
