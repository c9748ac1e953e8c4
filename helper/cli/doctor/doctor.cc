// `layover doctor [--target DIR]`: one line per requirement, OK, FAIL with
// the fix, or INFO. Probes in doctor_probes.cc, the diagnosis in
// doctor_report.cc (docs/cli.md lists the checks).
#include "helper/cli/doctor/doctor.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "helper/base/text.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"

namespace {

const char kDoctorUsage[] =
    "usage: layover doctor [--target DIR] [--fix]   check what layover needs (default target: $HOME)\n"
    "  --fix   finish or undo step operations (freeze, rollback, fork) and an apply or undo on --target\n"
    "          a kill left half-done\n";

}  // namespace

int cmd_doctor(int argc, char** argv) {
    std::string target;
    bool fix = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--target" && i + 1 < argc) target = argv[++i];
        else if (a.rfind("--target=", 0) == 0) target = a.substr(9);
        else if (a == "--fix") fix = true;
        else if (a == "-h" || a == "--help") {
            std::fputs(kDoctorUsage, stdout);
            return 0;
        } else {
            return cli::unknown_option("doctor", a, kDoctorUsage);
        }
    }
    if (target.empty()) {
        const char* home = std::getenv("HOME");
        target = home ? home : "";
    }
    int fails = 0;
    for (const auto& f : doctor::diagnose(doctor::probe_system(target))) {
        // Details (the mounts, the foreign entries) come before their FAIL line.
        for (const auto& d : f.details) std::printf("      %s\n", d.c_str());
        if (f.level == doctor::Level::Ok) std::printf("OK    %s\n", f.what.c_str());
        else if (f.level == doctor::Level::Info) std::printf("INFO  %s: %s\n", f.what.c_str(), f.fix.c_str());
        else {
            std::printf("FAIL  %s: %s\n", f.what.c_str(), f.fix.c_str());
            fails++;
        }
    }
    fails += doctor::check_histories(fix);
    fails += doctor::check_apply_journal(target, fix);
    return fails == 0 ? 0 : 1;
}
