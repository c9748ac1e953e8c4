// The config file's settings as command-line arguments (pure; unit-tested).
// Keys are long option names (flags.h). A top-level key reaches every verb
// that lets the file set it; a key in [VERB] reaches VERB only and wins over
// the top level's. The file's arguments go before the command line's, so a
// flag given there wins (the parsers keep the last value), and a repeatable
// option's command-line values extend the file's list.
#pragma once
#include <string>
#include <vector>

#include "helper/base/toml.h"
#include "helper/cli/common/flags.h"

namespace cli {

struct ConfigError {
    int line = 0;
    std::string message;  // what, then the fix
};

// Every key is known and every value of the right type, and run's values pass
// run's own parser. False and *err: the first problem, in file order.
bool check_config(const base::toml::Doc& doc, ConfigError* err);

struct Setting {
    const Flag* flag = nullptr;
    base::toml::Value value;
    int line = 0;
};

// The file's settings that reach `verb` (a checked doc), in file order.
std::vector<Setting> settings_for(const base::toml::Doc& doc, const std::string& verb);

// A setting as arguments: {"--network=none"}, {"--hide=a", "--hide=b"},
// {"--no-hide-secrets"} for hide-secrets = false, {} for wait = false. A
// leading "~" or "~/" of a value becomes home.
std::vector<std::string> setting_args(const Setting& s, const std::string& home);

// The command line of a verb (argv after the verb), as the verb reads it.
struct CliScan {
    bool no_config = false;           // --no-config was given (and is removed from args)
    std::vector<std::string> args;    // the rest, in order
    std::vector<const Flag*> given;   // the table's options it sets, in order (repeats kept)
    std::vector<std::string> values;  // their values ("" for a switch), parallel to given
};
CliScan scan_cli(const std::string& verb, const std::vector<std::string>& args);

// One line of `layover config`: KEY = VALUE  # ORIGIN.
struct Effective {
    const Flag* flag = nullptr;
    std::string shown;   // as TOML, or a description of the default
    std::string origin;  // "default", "config.toml:3", "command line", "config.toml:3 + command line"
};
std::vector<Effective> effective(const base::toml::Doc& doc, const std::string& verb, const CliScan& cli,
                                 const std::string& file_label);

}  // namespace cli
