// `layover compare A B [--json]`: the paths whose final state differs
// between two sessions of one target (docs/history.md), as B's changes over
// A's view. `layover diff A B` shows their diff.
#include <cstdio>
#include <string>

#include "capture/patch/manifest.h"
#include "capture/scan/entry/summary.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/base/json/writer.h"
#include "helper/base/text.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/store/session/session.h"

namespace {

constexpr const char* kCompareUsage =
    "usage: layover compare A B [--json]   the paths whose final state differs between sessions A and B";

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

}  // namespace

int cmd_compare(int argc, char** argv) {
    bool json = false;
    std::vector<std::string> pos;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::puts(kCompareUsage);
            std::puts(
                "  Each path as B changes it from A's view (A only in B, D only in A, M differs, ...); both kept");
            std::puts("  sessions of one target, e.g. forks of one session. 'layover diff A B' shows the diff.");
            std::puts("  --json   one JSON object: from, to and the changes (as 'status --json' lists them)");
            return 0;
        }
        if (a == "--json") {
            json = true;
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("compare", a, kCompareUsage);
        } else {
            pos.push_back(a);
        }
    }
    if (pos.size() != 2) return cli::usage_error("compare", "takes two sessions, A and B");
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto a = session::find(state.value(), pos[0]);
    if (!a) return fail(a.error().message);
    auto b = session::find(state.value(), pos[1]);
    if (!b) return fail(b.error().message);
    auto range = cli::compare_range(a.value(), b.value());
    if (!range) return fail(range.error().message);
    auto changes = capture::session_changes_as_owner(b.value(), !json, nullptr, {}, nullptr, range.value());
    if (!changes)
        return fail("comparing sessions '" + a->meta.name + "' and '" + b->meta.name + "': " + changes.error().message);
    if (json) {
        std::string o = "{";
        base::json::key(&o, "from");
        base::json::str(&o, a->meta.name);
        o += ", ";
        base::json::key(&o, "to");
        base::json::str(&o, b->meta.name);
        o += ", ";
        base::json::key(&o, "changes");
        o += capture::changes_to_json_text(changes.value());
        while (!o.empty() && o.back() == '\n') o.pop_back();
        o += "}\n";
        std::fwrite(o.data(), 1, o.size(), stdout);
        return 0;
    }
    std::printf("from session '%s' to session '%s': %zu path%s differ%s\n", a->meta.name.c_str(), b->meta.name.c_str(),
                changes->size(), changes->size() == 1 ? "" : "s", changes->size() == 1 ? "s" : "");
    if (!changes->empty()) {
        std::string text = capture::summary_text(changes.value(), {}, true, 0, false);
        std::fwrite(text.data(), 1, text.size(), stdout);
    }
    return 0;
}
