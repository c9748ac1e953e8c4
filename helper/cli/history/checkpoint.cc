// `layover checkpoint SESSION [-m LABEL] [--json]`: end the current step of
// a session; its live upper becomes the next frozen layer (docs/history.md).
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "helper/base/clock.h"
#include "helper/base/text.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/sandbox/ipc/control.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/session/session.h"

namespace {

constexpr const char* kUsage = "usage: layover checkpoint SESSION [-m LABEL] [--json]   end the current step";

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

// The freeze of a kept session, as its owner (the program may have left
// mode-000 dirs) in a child. A checkpoint killed after its commit (the
// rename) left no upper: made here, which finishes it.
base::Result<int> freeze_kept(const session::Info& s, const std::string& label) {
    auto r = capture::in_owner_ns([&]() -> base::Result<std::string> {
        std::string upper = session::upper_dir(s.dir);
        struct stat st;
        if (::lstat(upper.c_str(), &st) != 0 && errno == ENOENT && ::mkdir(upper.c_str(), 0755) != 0)
            return base::sys_error("creating the session's upper layer " + upper);
        // Past the depth limit freeze_live squashes the oldest two steps first
        // (docs/history.md): nothing runs over the layers of a kept session.
        if (!label.empty()) {
            auto live = steps::read_live(s.dir);
            steps::Live l = live ? live.value() : steps::Live{};
            l.label = label;
            TRY_VOID(steps::write_live(s.dir, l));
        }
        TRY(int n, steps::freeze_live(s.dir, s.meta.target, base::utc_now_rfc3339(), steps::kMaxDepth, "checkpoint"));
        return std::to_string(n);
    });
    if (!r) return r.error();
    return std::stoi(r.value());
}

}  // namespace

int cmd_checkpoint(int argc, char** argv) {
    std::string name, label;
    bool json = false, have_label = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::puts(kUsage);
            std::puts("  -m, --message LABEL   the step's label (default: the run's command line)");
            std::puts("  --json                one JSON object: the session, the step made (null: none) and its label");
            return 0;
        }
        if ((a == "-m" || a == "--message") && i + 1 >= argc) {
            return cli::usage_error("checkpoint", "-m needs a LABEL");
        } else if (a == "-m" || a == "--message") {
            label = argv[++i];
            have_label = true;
        } else if (a.rfind("--message=", 0) == 0) {
            label = a.substr(10);
            have_label = true;
        } else if (a == "--json") {
            json = true;
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("checkpoint", a, kUsage);
        } else if (name.empty()) {
            name = a;
        } else {
            return cli::usage_error("checkpoint", "more than one session given");
        }
    }
    if (name.empty()) return cli::usage_error("checkpoint", "missing SESSION (list them with 'layover sessions')");
    if (have_label && label.empty()) return cli::usage_error("checkpoint", "-m needs a non-empty LABEL");
    if (label.size() > 200) {
        label.resize(197);
        label += "...";
    }
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = session::find(state.value(), name);
    if (!s) return fail(s.error().message);
    const std::string& sname = s->meta.name;
    base::Result<int> made = 0;
    if (s->state == "running") {
        made = control::checkpoint(s->dir, label);
    } else {
        // Held while the layers move, so a run cannot resume it half-way.
        auto lk = session::lock(s->dir, sname);
        if (!lk) return fail(lk.error().message);
        made = freeze_kept(s.value(), label);
    }
    if (!made) return fail("checkpoint of session '" + sname + "': " + made.error().message);
    int n = made.value();
    if (json) {
        nlohmann::json o = {
            {"session", sname}, {"step", n > 0 ? nlohmann::json(n) : nlohmann::json(nullptr)}, {"label", label}};
        std::puts(o.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace).c_str());
    } else if (n > 0) {
        std::printf("session '%s': step %d\n", base::display_path(sname).c_str(), n);
    } else {
        std::printf("session '%s': no changes since the last step; no step made\n", base::display_path(sname).c_str());
    }
    return 0;
}
