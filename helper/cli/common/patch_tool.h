// Exec layover-patch, the binary holding the verbs that read or write
// patches (libarchive, libzstd), with argv starting at its verb.
#pragma once

// Returns only when it could not exec (1, the error printed).
int exec_patch_tool(char** argv);
