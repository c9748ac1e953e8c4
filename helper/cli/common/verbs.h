// The verbs: one table, from which both dispatchers (layover, layover-patch)
// and the usage text are made. Each entry point is "main-level": it parses
// its own argv (argv[0] is the verb), prints, and returns the process exit
// code (0 ok, 1 failure, 2 usage; `run` passes on the child's status and uses
// 125-127 itself).
#pragma once

// Where a verb's code lives. Main: in `layover`, which links no libarchive or
// libzstd. Patch: in `layover-patch`, which `layover` execs. Both: either.
enum class Bin { Main, Patch, Both };

// X(name, function, binary, usage line); a usage line of nullptr keeps the
// verb out of `layover --help` (internal).
#define LAYOVER_VERBS(X)                                                                                               \
    X("run", cmd_run, Bin::Main, "run [--target DIR] [--session NAME] [--on-exit MODE] [--] [CMD [ARG...]]")           \
    X("sessions", cmd_sessions, Bin::Main, "sessions [--json] [--trash]     list sessions: state, age, changes")       \
    X("status", cmd_status, Bin::Both, "status [SESSION] [--json]       changes of a session")                         \
    X("save", cmd_save, Bin::Patch, "save SESSION -o FILE.tar.zst    write a patch")                                   \
    X("show", cmd_show, Bin::Patch, "show FILE.tar.zst [--json]      summary of a patch")                              \
    X("diff", cmd_diff, Bin::Patch, "diff [SESSION|PATCH] [--stat] [--name-status] [--color=WHEN] [-- PATH...]")       \
    X("apply", cmd_apply, Bin::Patch,                                                                                  \
      "apply SESSION|PATCH [--target DIR] [--dry-run] [--force] [--only PATH] [--exclude GLOB] [--yes]")               \
    X("undo", cmd_undo, Bin::Patch, "undo UNDO|--last|--list [--target DIR]  put back what an apply changed")          \
    X("discard", cmd_discard, Bin::Main,                                                                               \
      "discard SESSION [--now|--rejected]  remove a session (or its rejected changes)")                                \
    X("restore", cmd_restore, Bin::Main,                                                                               \
      "restore NAME                    bring a discarded session back from the trash")                                 \
    X("gc", cmd_gc, Bin::Main,                                                                                         \
      "gc [--older-than AGE] [--applied] [--trash] [--dry-run]  prune sessions, trash, undo records")                  \
    X("mcp", cmd_mcp, Bin::Main, "mcp [--target DIR] [RUN OPTIONS]  serve MCP tools in a sandbox")                     \
    X("doctor", cmd_doctor, Bin::Main, "doctor [--target DIR] [--fix]   check what layover needs from the kernel")     \
    X("config", cmd_config, Bin::Main, "config [--path] [VERB [ARGS]]   effective options and where each comes from")  \
    X("log", cmd_log, Bin::Main, "log [SESSION] [--json]          the session's steps, newest first")                  \
    X("blame", cmd_blame, Bin::Main, "blame SESSION PATH              every step that touched PATH, oldest first")     \
    X("rollback", cmd_rollback, Bin::Main, "rollback SESSION N|--undo       the session as it was after step N")       \
    X("fork", cmd_fork, Bin::Main, "fork SESSION NEW [--at N]       a new session sharing SESSION's steps")            \
    X("reject", cmd_reject, Bin::Main, "reject SESSION PATH[:HUNK] [-m REASON]  keep a change out of later applies")   \
    X("rejections", cmd_rejections, Bin::Main, "rejections SESSION [--json]     the changes a person rejected")        \
    X("checkpoint", cmd_checkpoint, Bin::Main,                                                                         \
      "checkpoint SESSION [-m LABEL]   end the current step: freeze the live changes")                                 \
    X("compare", cmd_compare, Bin::Both, "compare A B [--json]            paths whose final state differs in A and B") \
    X("revert", cmd_revert, Bin::Main, "revert SESSION N                take back step N alone, keeping later steps")  \
    X("on-exit", cmd_on_exit, Bin::Patch, nullptr)

#define LAYOVER_DECLARE_VERB(name, fn, bin, usage) int fn(int argc, char** argv);
LAYOVER_VERBS(LAYOVER_DECLARE_VERB)
#undef LAYOVER_DECLARE_VERB

// `layover-patch on-exit MODE SESSION` is run by the supervisor when the
// child exits, for MODE prompt|apply|save:FILE. It returns run's exit code
// contribution: 0 ok, 125 when the action failed (the session is kept).
