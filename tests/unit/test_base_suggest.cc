#include <catch2/catch.hpp>

#include "helper/base/suggest.h"

using base::did_you_mean;
using base::nearest_flag;

namespace {
const char kHelp[] =
    "usage: layover run [--target DIR] [--session NAME] [--on-exit MODE] [--json] [--at N]\n"
    "  --no-hide-secrets  read every secret\n"
    "  --hide PATH        hide PATH too; see --target (again)\n";
}

TEST_CASE("suggest: a mistyped long flag finds the one it was meant to be") {
    CHECK(nearest_flag("--sesion", kHelp) == "--session");    // a letter left out
    CHECK(nearest_flag("--sessoin", kHelp) == "--session");   // two swapped
    CHECK(nearest_flag("--targte=/x", kHelp) == "--target");  // a value is left out
    CHECK(nearest_flag("-json", kHelp) == "--json");          // one dash
    CHECK(nearest_flag("--on_exit", kHelp) == "--on-exit");   // _ for -
    CHECK(nearest_flag("--no-hide-secret", kHelp) == "--no-hide-secrets");
    CHECK(nearest_flag("--sess", kHelp) == "--session");  // the only flag it begins
    CHECK(did_you_mean("--sesion", kHelp) == " (did you mean '--session'?)");
}

TEST_CASE("suggest: nothing when no flag is near, or the arg is one") {
    CHECK(nearest_flag("--frobnicate", kHelp).empty());
    CHECK(nearest_flag("--jsn2x", kHelp).empty());  // a short name allows one edit only
    CHECK(nearest_flag("--hid", kHelp) == "--hide");
    CHECK(nearest_flag("--xx", kHelp).empty());  // begins no flag with three letters
    CHECK(nearest_flag("--json", kHelp).empty());
    CHECK(nearest_flag("-", kHelp).empty());
    CHECK(nearest_flag("--", kHelp).empty());
    CHECK(nearest_flag("x--json", kHelp).empty());
    CHECK(nearest_flag(std::string(100, 'a'), kHelp).empty());
    CHECK(nearest_flag("--session", "no flags here").empty());
    CHECK(did_you_mean("--frobnicate", kHelp).empty());
    // "--n" begins --no-hide-secrets but names fewer than three letters.
    CHECK(nearest_flag("--n", kHelp).empty());
}

TEST_CASE("suggest: never a flag of another verb the help text names") {
    const char help[] =
        "usage: layover apply SESSION|PATCH [--hunks PATH:N]\n"
        "       layover apply --undo-last\n"
        "  --hunks PATH:N  numbers as 'layover diff --hunk-numbers' prints them; 'layover sessions --trash'\n";
    CHECK(nearest_flag("--hunk-number", help).empty());  // diff's, not apply's
    CHECK(nearest_flag("--hunk-numbers", help).empty());
    CHECK(nearest_flag("--tras", help).empty());
    CHECK(nearest_flag("--undo-las", help) == "--undo-last");  // the verb's own usage line
}

TEST_CASE("suggest: the session a mistyped name was meant to be") {
    using base::nearest_name;
    const std::vector<std::string> names = {"agent1", "tour", "pyagent", "20261127-084544-03c0",
                                            "20261127-091200-aa11"};
    CHECK(nearest_name("agnet1", names) == "agent1");  // a swap of neighbours
    CHECK(nearest_name("tuor", names) == "tour");
    CHECK(nearest_name("tor", names) == "tour");
    CHECK(nearest_name("agent", names) == "agent1");
    CHECK(nearest_name("20261127-0845", names) == "20261127-084544-03c0");  // the only one it begins
    CHECK(nearest_name("2026", names).empty());                             // begins two
    CHECK(nearest_name("agent1", names).empty());                           // it is one
    CHECK(nearest_name("zzzz", names).empty());
    CHECK(nearest_name("", names).empty());
    CHECK(nearest_name("ab1", {"ab2", "ab3"}).empty());  // two as near: no guess
}
