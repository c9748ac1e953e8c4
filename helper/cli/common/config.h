// The config file, ${XDG_CONFIG_HOME:-~/.config}/layover/config.toml: found,
// read and checked on the host by the user's own layover, never inside a
// sandbox (a process with LAYOVER_SESSION set reads none).
#pragma once
#include <string>

#include "helper/base/toml.h"

namespace cli {

// The file's path ("" when neither XDG_CONFIG_HOME nor HOME is absolute).
std::string config_path();

// Read and check the file: true with *doc (empty when there is no file);
// false with *err, one line naming the file, the line and the fix.
bool load_config(base::toml::Doc* doc, std::string* err);

// Run verb's entry point fn with the file's settings for it put before the
// command line's arguments (or none with --no-config, which is removed). A
// bad file is an error naming it: exit 2, or 125 for run. Called once per
// process, by whichever binary runs the verb.
int with_config(int argc, char** argv, int (*fn)(int, char**));

// rc, or 1 with a one-line error when stdout is a file or device that did
// not take all the verb printed (a full disk): flushed here. with_config
// calls it after the verb; a verb that leaves by _Exit calls it itself.
int checked_stdout(const std::string& verb, int rc);

}  // namespace cli
