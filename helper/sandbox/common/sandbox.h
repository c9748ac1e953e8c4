// The processes that build and run the sandbox, each a clone of the one
// before:
//   supervisor (outside every new namespace; helper/supervisor.cc)
//     -> setup, then init: one process, cloned into new user+mount+pid+ipc
//        namespaces (and a network one entered after): PID 1 of the new PID
//        namespace. As setup it makes the mounts (helper/setup.cc), then as
//        init mounts a fresh /proc and starts the child (helper/init.cc)
//        -> child (nested user+mount namespace: mounts locked, no caps,
//                  no_new_privs; execs the command; helper/child.cc)
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "helper/sandbox/common/sync.h"
#include "helper/sandbox/limits/limits.h"
#include "overlay/mounts.h"

struct SandboxPlan {
    overlay::MountPlan mounts;
    std::string cwd;                   // caller's working directory
    std::vector<std::string> command;  // argv (PATH-searched)
    std::vector<std::string> env;      // the command's environment (helper/sandbox/policy/profile.h)
    bool loopback = true;              // own network namespace: bring lo up (--network loopback)
    bool wait_all = false;             // --wait: init waits for every process, not just the command
    Limits limits;                     // rlimits set in the child; timeout and size watched by the supervisor
    bool seccomp = true;               // off only by the caller's test-only LAYOVER_TEST_NO_SECCOMP=1
    bool rename_notify = false;        // renames go through the supervisor (helper/sandbox/rename/rename_notify.h)
    bool pass_mnt_ns = false;          // the child sends its mount namespace up [sync 7] (a discarding run)
    std::string session;               // exported as LAYOVER_SESSION
    int ipc_fd = -1;                   // becomes fd 3 in the command
    int pty_slave = -1;                // runs at a terminal: the command's tty (helper/sandbox/supervisor/pty_relay.h)
    unsigned pty_fds = 0;              // which of the command's fds 0-2 it becomes (bit N: fd N); with 0, its ctty
    int sync_fd = -1;                  // setup's end of the supervisor socketpair
    int freeze_fd = -1;                // setup's end of the checkpoint requests (helper/sandbox/live/live_freeze.h)
    uid_t uid = 0;
    gid_t gid = 0;
};

// Entry points of the forked processes; each returns its exit code.
namespace live_freeze {
struct Fds;
}
int setup_main(const SandboxPlan& plan);  // ends in init_main
int init_main(const SandboxPlan& plan, live_freeze::Fds& frozen);
[[noreturn]] void child_main(const SandboxPlan& plan);
