// What `apply` and `undo` share: --opt VALUE parsing, paths from the caller's directory, and the report they print
// (text notes and conflicts on stderr, or one JSON object on stdout).
#pragma once
#include <cstdint>
#include <string>

#include "review/apply/apply.h"

namespace cli {

// --opt VALUE or --opt=VALUE at argv[i] (i moves past the value); an empty
// or missing value is "\x01".
bool take_value(int argc, char** argv, int& i, const char* name, std::string* out);
// A relative path made absolute from the caller's working directory, its
// empty and `.` components and a trailing `/` dropped (`..` kept).
void absolute(std::string* path);

// The report as one JSON object (err: the failure, else ""); running: a
// dry run of a session still running, said as "running": true.
void print_json(const review::ApplyReport* rep, const std::string& err, bool dry_run, uint64_t ignored = 0,
                bool running = false);
// forced: --force was given, so what is left are conflicts it does not
// override (a parent dir gone, a symlink or mount point; a hunk chosen on
// other content): the fix line then does not name --force.
void print_conflicts(const char* verb, const review::ApplyReport& rep, const std::string& what, bool forced = false);
// apply --conflict=markers left a stale copy a conflict (it has no original
// to merge with): one note line says why, so the flag is not tried again.
void note_markers_unmergeable(const review::ApplyReport& rep, bool markers);
void print_notes(const char* verb, const review::ApplyReport& rep);

}  // namespace cli
