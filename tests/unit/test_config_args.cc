// The config file's settings as arguments (helper/cli/common/config_args.h): which
// keys reach which verb, the verb table over the top level, the command line
// over both, and the error for every kind of bad key.
#include <catch2/catch.hpp>

#include "helper/cli/common/config_args.h"

namespace {

base::toml::Doc doc_of(const std::string& text) {
    base::toml::Doc d;
    base::toml::ParseError e;
    REQUIRE(base::toml::parse(text, &d, &e));
    return d;
}

std::vector<std::string> args_for(const std::string& text, const std::string& verb) {
    auto d = doc_of(text);
    cli::ConfigError err;
    INFO(err.message);
    REQUIRE(cli::check_config(d, &err));
    std::vector<std::string> out;
    for (const auto& s : cli::settings_for(d, verb))
        for (const auto& a : cli::setting_args(s, "/home/u")) out.push_back(a);
    return out;
}

cli::ConfigError error_of(const std::string& text) {
    auto d = doc_of(text);
    cli::ConfigError err;
    REQUIRE_FALSE(cli::check_config(d, &err));
    return err;
}

using V = std::vector<std::string>;

}  // namespace

TEST_CASE("config: top-level keys reach every verb that takes them; [verb] wins") {
    std::string text =
        "network = \"none\"\n"
        "json = true\n"
        "target = \"~/proj\"\n"
        "hide = [\"~/.kube\", \"/srv/x\"]\n"
        "[status]\n"
        "json = false\n"
        "[run]\n"
        "hide-secrets = false\n"
        "max-pids = 512\n"
        "network = \"host\"\n"
        "wait = false\n";
    CHECK(args_for(text, "run") == V{"--target=/home/u/proj", "--hide=/home/u/.kube", "--hide=/srv/x",
                                     "--no-hide-secrets", "--max-pids=512", "--network=host"});
    CHECK(args_for(text, "status").empty());  // [status] json = false overrides the top level
    CHECK(args_for(text, "sessions") == V{"--json"});
    CHECK(args_for(text, "doctor") == V{"--target=/home/u/proj"});
    // apply's --target means "another tree than the session's": only [apply] sets it.
    CHECK(args_for(text, "apply") == V{"--json"});
    CHECK(args_for("[apply]\ntarget = '/srv'\n", "apply") == V{"--target=/srv"});
    CHECK(error_of("[diff]\ncolor = false\n").message == "'color' takes a string, e.g. color = \"never\"");
    CHECK(args_for("[diff]\ncolor = 'always'\n", "diff") == V{"--color=always"});
    CHECK(args_for("no-hide-secrets = true\n", "run") == V{"--no-hide-secrets"});
    CHECK(args_for("[run]\nno-hide-secrets = false\n", "run") == V{"--hide-secrets"});
}

TEST_CASE("config: the command line is scanned as the verb reads it") {
    auto s = cli::scan_cli("run",
                           {"--network", "host", "--no-config", "-q", "--hide=a", "cmd", "--no-config", "--hide", "b"});
    CHECK(s.no_config);
    CHECK(s.args == V{"--network", "host", "-q", "--hide=a", "cmd", "--no-config", "--hide", "b"});
    REQUIRE(s.given.size() == 3);
    CHECK(std::string(s.given[0]->name) == "network");
    CHECK(s.values[0] == "host");
    CHECK(std::string(s.given[1]->name) == "quiet");
    CHECK(s.values[2] == "a");
    // status takes options after its operand; "--" ends them everywhere.
    auto st = cli::scan_cli("status", {"NAME", "--no-config", "--json", "--", "--no-config"});
    CHECK(st.no_config);
    CHECK(st.args == V{"NAME", "--json", "--", "--no-config"});
    auto sv = cli::scan_cli("save", {"S", "-oFILE"});
    REQUIRE(sv.given.size() == 1);
    CHECK(sv.values[0] == "FILE");
}

TEST_CASE("config: effective values and where each comes from") {
    auto d = doc_of("network = \"none\"\nhide = [\"a\"]\n[run]\ntimeout = \"2h\"\n");
    auto cli_args = cli::scan_cli("run", {"--network=loopback", "--hide", "b", "--wait"});
    auto eff = cli::effective(d, "run", cli_args, "config.toml");
    auto find = [&](const std::string& name) -> cli::Effective {
        for (const auto& e : eff)
            if (name == e.flag->name) return e;
        return {};
    };
    CHECK(find("network").shown == "\"loopback\"");
    CHECK(find("network").origin == "command line");
    CHECK(find("hide").shown == "[\"a\", \"b\"]");
    CHECK(find("hide").origin == "config.toml:2 + command line");
    CHECK(find("timeout").shown == "\"2h\"");
    CHECK(find("timeout").origin == "config.toml:4");
    CHECK(find("wait").origin == "command line");
    CHECK(find("max-pids").shown == "\"4096\"");
    CHECK(find("max-pids").origin == "default");
    CHECK(find("session").flag == nullptr);  // never from the file, never shown
}

TEST_CASE("config: unknown keys, misplaced keys and bad values are errors with the fix") {
    auto e = error_of("wait = true\nnetwrok = \"none\"\n");
    CHECK(e.line == 2);
    CHECK(e.message == "unknown key 'netwrok'; did you mean 'network' (run)?");
    e = error_of("[apply]\nnetwork = \"none\"\n");
    CHECK(e.message == "[apply] has no 'network'; run takes it: put it under [run]");
    e = error_of("jsn = true\n");
    CHECK(e.message.find("'json' (sessions, status, show, apply, undo, log, rejections)") != std::string::npos);
    e = error_of("session = \"x\"\n");
    CHECK(e.message.find("cannot be set in the config file") != std::string::npos);
    CHECK(error_of("[apply]\nonly = [\"a\"]\n").message.find("give --only on the command line") != std::string::npos);
    e = error_of("[nope]\n");
    CHECK(e.message.find("unknown table [nope]; tables are named after verbs: run, sessions") == 0);
    CHECK(error_of("wait = \"yes\"\n").message == "'wait' is a switch; write wait = true or wait = false");
    CHECK(error_of("network = true\n").message.find("'network' takes a value, not true/false") == 0);
    CHECK(error_of("network = [\"none\"]\n").message.find("takes one value, not an array") != std::string::npos);
    // run's own parser judges run's values, with its own words.
    e = error_of("\n\n[run]\nnetwork = \"wifi\"\n");
    CHECK(e.line == 4);
    CHECK(e.message == "unknown --network 'wifi'; use loopback, none or host");
    CHECK(error_of("max-pids = 3\n").message.find("bad --max-pids '3'") == 0);
    CHECK(error_of("hide = [\"ok\", \"\"]\n").message.find("--hide needs a path") == 0);
}
