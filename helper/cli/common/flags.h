// Every verb's long options, in one table (flags.cc): what the config file
// may set, what `layover config` shows, and what the --help test checks
// against each verb's real usage text. Adding a flag to a verb is one line
// there.
#pragma once
#include <string>
#include <vector>

namespace cli {

enum class Arg {
    None,      // a switch: --json
    Value,     // --target DIR or --target=DIR
    Optional,  // --color or --color=WHEN
};

enum class Cfg {
    Any,    // the config file may set it, at the top level or in the verb's [table]
    Table,  // only in the verb's [table] (a top-level key does not reach it)
    No,     // names one invocation's object (a session, an output file): never from the file
};

struct Flag {
    const char* verb;
    const char* name;  // without the leading "--"
    char short_name;   // 'q' for -q, or 0
    Arg arg;
    bool repeat;  // may be given several times (values accumulate)
    Cfg cfg;
    const char* def;  // the default as `layover config` shows it ("" none)
};

const std::vector<Flag>& all_flags();

// The verbs with a row in the table (in table order, once each).
std::vector<std::string> table_verbs();

// The flag, or nullptr.
const Flag* find_flag(const std::string& verb, const std::string& name);

// Options end at the first operand (run: the command) rather than at "--" only.
bool options_end_at_operand(const std::string& verb);

}  // namespace cli
