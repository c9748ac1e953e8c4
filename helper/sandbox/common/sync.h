// Sync messages from setup/init/child to the supervisor over a
// SOCK_SEQPACKET socketpair, one message each: a tag byte, then text.
// Numbered sync points are referenced in comments on both sides:
//   [sync 1] Maps     setup wrote its id maps: supervisor may go non-dumpable
//   [sync 2] InitPid  setup is done and is init now (PID 1, the supervisor's
//            clone): signals go there
//   [sync 3] Warning  + text: a warning to print (e.g. a submount not captured)
//   [sync E] Error    + text: setup failed: the one-line reason; run exits 125
//   [sync 4] Leftover + "name (pid N), ...": init found these still running
//            when the command exited; they die with init
//   [sync 5] Listener + an fd (SCM_RIGHTS): the child's seccomp listener for
//            renames, sent right before exec (helper/sandbox/rename/rename_notify.h)
//   [sync 6] Status   + code: init reaped the command (with --wait, the last
//            process) and killed what was left; sent just before init exits.
//            A discarding run returns this code without waiting for the
//            namespaces' teardown (PreparedRun::exit_early)
//   [sync 7] MountNs  + an fd (SCM_RIGHTS): the child's own mount namespace,
//            sent before exec by a discarding run (SandboxPlan::pass_mnt_ns).
//            Held, the command's exit does not tear that namespace down (a
//            third of a millisecond before init learns of it); the remover
//            drops it (helper/sandbox/prepare/discard.h)
//   [sync 8] Pty      the child took the pty as its controlling terminal:
//            from now on a typed Ctrl+C makes a SIGINT for the command, so
//            the supervisor starts relaying keys (held in the terminal until
//            then: one relayed earlier would find no process group to signal)
// And one the other way, supervisor to setup:
//   [sync 0] Go       twice: first once a new session's dirs exist (setup
//            waits for it before it opens them, after the namespaces), then
//            once the session's records (meta.json, steps/live.json) are
//            written; setup waits for that before init starts, so nothing
//            of the command runs before its session is listed
#pragma once
#include <string>

enum class Sync : char {
    Maps = 'M',
    InitPid = 'P',
    Warning = 'W',
    Error = 'E',
    Leftover = 'L',
    Listener = 'N',
    Status = 'S',
    MountNs = 'T',
    Pty = 'Y',
    Go = 'G'
};

namespace sync_msg {
bool send(int fd, Sync tag, const std::string& text = "");
// The tag and one fd, as SCM_RIGHTS (helper/sandbox/setup/setup.cc; received with fd_pass::recv).
bool send_fd(int fd, Sync tag, int passed);
}  // namespace sync_msg
