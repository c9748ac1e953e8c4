// `layover config [--path] [VERB [ARGS...]]`: the effective settings and
// where each comes from (default, config.toml:LINE, command line).
#include <sys/stat.h>

#include <cstdio>
#include <string>
#include <vector>

#include "helper/base/text.h"
#include "helper/cli/common/config.h"
#include "helper/cli/common/config_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"

namespace {

const char kConfigUsage[] =
    "usage: layover config [--path | --keys] [--no-config] [VERB [ARGS...]]\n"
    "  Print the effective options of every verb (or of VERB, as ARGS would change them) and where each\n"
    "  comes from: default, config.toml:LINE or command line.\n"
    "  --path     print the config file's path: ${XDG_CONFIG_HOME:-~/.config}/layover/config.toml\n"
    "  --keys     list every verb's long options: the keys the file may set (or not)\n"
    "  --no-config  show the options without the file's settings\n";

// VERB --NAME VALUE|[=VALUE]|- repeatable|once any|table|no, one line each.
int print_keys() {
    for (const auto& f : cli::all_flags()) {
        const char* arg = f.arg == cli::Arg::Value ? "VALUE" : f.arg == cli::Arg::Optional ? "[=VALUE]" : "-";
        const char* where = f.cfg == cli::Cfg::Any     ? "top-level or [verb]"
                            : f.cfg == cli::Cfg::Table ? "[verb] only"
                                                       : "command line only";
        std::printf("%-9s --%-18s %-9s %-11s %s\n", f.verb, f.name, arg, f.repeat ? "repeatable" : "once", where);
    }
    return 0;
}

}  // namespace

int cmd_config(int argc, char** argv) {
    std::vector<std::string> args(argv + 1, argv + argc);
    std::string verb;
    size_t i = 0;
    for (; i < args.size() && verb.empty(); i++) {
        const std::string& a = args[i];
        if (a == "-h" || a == "--help") {
            std::fputs(kConfigUsage, stdout);
            return 0;
        }
        if (a == "--keys") return print_keys();
        if (a == "--path") {
            std::string p = cli::config_path();
            if (p.empty()) {
                std::fputs("layover config: neither XDG_CONFIG_HOME nor HOME is an absolute path; set HOME\n", stderr);
                return 1;
            }
            std::printf("%s\n", p.c_str());
            return 0;
        }
        if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("config", a, kConfigUsage);
        }
        verb = a;
    }
    auto verbs = cli::table_verbs();
    if (!verb.empty()) {
        bool known = false;
        for (const auto& v : verbs) known |= v == verb && v != "config";
        if (!known) return cli::usage_error("config", "no verb '" + base::display_path(verb) + "' takes options");
        verbs = {verb};
    }
    cli::CliScan cli = cli::scan_cli(verb, std::vector<std::string>(args.begin() + static_cast<long>(i), args.end()));
    base::toml::Doc doc;
    std::string err, path = cli::config_path();
    if (!cli.no_config && !cli::load_config(&doc, &err)) {
        std::fprintf(stderr, "layover config: %s\n", err.c_str());
        return 1;
    }
    struct stat st {};
    std::string note = cli.no_config                                    ? " (--no-config: not read)"
                       : path.empty() || ::stat(path.c_str(), &st) != 0 ? " (none: defaults only)"
                                                                        : "";
    std::printf("# %s%s\n", path.empty() ? "no config path (HOME unset)" : base::display_path(path).c_str(),
                note.c_str());
    for (const auto& v : verbs) {
        if (v == "config") continue;
        auto lines = cli::effective(doc, v, cli, "config.toml");
        if (lines.empty()) continue;
        std::printf("\n[%s]\n", v.c_str());
        for (const auto& e : lines) {
            std::string kv = e.origin == "default" && e.shown.find(' ') != std::string::npos
                                 ? std::string("# ") + e.flag->name + ": " + e.shown
                                 : std::string(e.flag->name) + " = " + e.shown;
            std::printf("%-40s # %s\n", kv.c_str(), e.origin.c_str());
        }
    }
    return 0;
}
