// Verb entry points. Each is "main-level": it parses its own argv (argv[0] is
// the verb), prints, and returns the process exit code (0 ok, 1 failure,
// 2 usage; `run` passes on the child's status and uses 125-127 itself).
#pragma once

// helper/ (binary: layover)
int cmd_run(int argc, char** argv);
int cmd_sessions(int argc, char** argv);
int cmd_discard(int argc, char** argv);
int cmd_restore(int argc, char** argv);
int cmd_doctor(int argc, char** argv);

// capture/ (binary: layover-patch, exec'd by layover)
int cmd_status(int argc, char** argv);
int cmd_save(int argc, char** argv);
int cmd_show(int argc, char** argv);

// review/ (binary: layover-patch)
int cmd_diff(int argc, char** argv);
int cmd_apply(int argc, char** argv);
int cmd_undo(int argc, char** argv);
// Internal: `layover-patch on-exit MODE SESSION`, run by the supervisor when
// the child exits, for MODE prompt|apply|save:FILE. Returns run's exit code
// contribution: 0 ok, 125 when the action failed (the session is kept).
int cmd_on_exit(int argc, char** argv);
