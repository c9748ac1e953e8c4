// `layover doctor` on session histories (docs/history.md, "Faults"): what a
// killed freeze, rollback, undo or fork left, and with --fix its repair.
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "helper/base/text.h"
#include "helper/cli/doctor/doctor.h"
#include "helper/store/layers/steps.h"
#include "helper/store/session/layer_gc.h"
#include "helper/store/session/session.h"
#include "review/apply/recover_pending.h"

namespace doctor {

int check_histories(bool fix) {
    auto state = session::state_dir();
    if (!state) return 0;  // the state dir's own line already failed
    int fails = 0, found = 0;
    auto report = [&](const std::string& what, bool fixable = true) {
        found++;
        if (!fixable) {
            std::printf("FAIL  %s: the step is lost; 'layover rollback' below it, or discard the session\n",
                        what.c_str());
            fails++;
        } else if (fix) {
            std::printf("FIXED %s\n", what.c_str());
        } else {
            std::printf("FAIL  %s: 'layover doctor --fix' repairs it\n", what.c_str());
            fails++;
        }
    };
    for (const auto& stale : steps::stale_forks(session::sessions_dir(state.value()))) {
        if (fix) steps::remove_flat(stale);
        report("a half-built fork " + stale + " (its process is gone)" + (fix ? ": removed" : ""));
    }
    auto all = session::list(state.value());
    if (all) {
        for (const auto& s : all.value()) {
            if (s.state == "running") continue;
            base::Fd lock;
            if (fix) {
                auto lk = session::lock(s.dir, s.meta.name);
                if (!lk) continue;
                lock = std::move(lk.value());
            }
            for (const auto& p : steps::check_history(s.dir, fix))
                report("session '" + base::display_path(s.meta.name) + "': " + p.what, p.fixable);
        }
    }
    if (!found) std::printf("OK    session histories: no step operation left half-done\n");
    auto loose = steps::sweep_store(state.value(), true);
    if (loose && !loose->ids.empty())
        std::printf("INFO  %zu layer%s in the layer store no session refers to (%s): 'layover gc' removes them\n",
                    loose->ids.size(), loose->ids.size() == 1 ? "" : "s", base::bytes_short(loose->bytes).c_str());
    return fails;
}

int check_apply_journal(const std::string& target, bool fix) {
    auto state = session::state_dir();
    char buf[PATH_MAX];
    if (!state || !::realpath(target.c_str(), buf) || !review::journal_pending(*state, buf)) return 0;
    std::string real = base::display_path(buf);
    if (!fix) {
        std::printf(
            "FAIL  an apply or undo on %s was interrupted: 'layover doctor --fix --target %s' (or 'layover "
            "undo --last --target %s') takes it back\n",
            real.c_str(), real.c_str(), real.c_str());
        return 1;
    }
    auto back = review::recover_pending(*state, buf);
    if (!back) {
        std::printf("FAIL  an apply or undo on %s was interrupted: %s\n", real.c_str(), back.error().message.c_str());
        return 1;
    }
    if (!back->note.empty()) std::printf("FIXED %s\n", back->note.c_str());
    return 0;
}

}  // namespace doctor
