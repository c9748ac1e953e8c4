// `layover reject NAME PATH[:HUNK] [-m REASON]` and `layover rejections NAME
// [--json]`: a person's "not this change", kept in the session for later
// applies to skip and for the agent to read (docs/review.md, "Rejections").
#include <cstdio>
#include <cstring>
#include <string>

#include "capture/scan/walk/session_scan.h"
#include "helper/base/clock.h"
#include "helper/base/text.h"
#include "helper/cli/common/path_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/cli/session/session_rejections.h"
#include "helper/store/records/rejections.h"

namespace {

const char kRejectUsage[] =
    "usage: layover reject SESSION PATH[:HUNK] [-m REASON]\n"
    "  Record that PATH's change (or only its hunk HUNK, numbered as 'layover diff --hunk-numbers' prints)\n"
    "  is not wanted: later applies of the session skip it (see 'layover apply --help'), and the agent\n"
    "  reads the reason (MCP changes/review_feedback, Python sb.rejections()).\n"
    "  -m, --message REASON  why, in one line (at most 500 bytes)\n";

const char kRejectionsUsage[] =
    "usage: layover rejections SESSION [--json]\n"
    "  The session's rejections: in force, or superseded (the agent changed that file since).\n";

int help(const char* text) {
    std::fputs(text, stdout);
    return 0;
}

int fail(const std::string& verb, const std::string& msg) {
    std::fprintf(stderr, "layover: %s: %s\n", verb.c_str(), msg.c_str());
    return 1;
}

// PATH[:HUNK]: a trailing ':' and digits name a hunk (a path ending so is
// given as PATH:0, the whole change).
void split_hunk(const std::string& arg, std::string* path, size_t* hunk) {
    *path = arg;
    *hunk = 0;
    size_t colon = arg.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == arg.size() || arg.size() - colon > 8) return;
    std::string digits = arg.substr(colon + 1);
    if (digits.find_first_not_of("0123456789") != std::string::npos) return;
    *path = arg.substr(0, colon);
    *hunk = std::stoul(digits);
}

}  // namespace

int cmd_reject(int argc, char** argv) {
    std::string name, target_arg, reason;
    bool has_reason = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") return help(kRejectUsage);
        if (a == "-m" || a == "--message") {
            if (i + 1 >= argc) return cli::usage_error("reject", a + " needs a value (the reason)");
            reason = argv[++i];
            has_reason = true;
        } else if (a.rfind("--message=", 0) == 0) {
            reason = a.substr(10);
            has_reason = true;
        } else if (a == "--") {
            for (i++; i < argc; i++) (name.empty() ? name : target_arg.empty() ? target_arg : a) = argv[i];
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("reject", a, kRejectUsage);
        } else if (name.empty()) {
            name = a;
        } else if (target_arg.empty()) {
            target_arg = a;
        } else {
            return cli::usage_error("reject", "one PATH[:HUNK] at a time (got '" + base::display_path(a) + "' too)");
        }
    }
    if (name.empty() || target_arg.empty()) return cli::usage_error("reject", "missing SESSION or PATH");
    (void)has_reason;
    if (std::string why = session::reason_problem(reason); !why.empty())
        return cli::usage_error("reject", "the reason is " + why + "; give one short line with -m");
    auto state = session::state_dir();
    if (!state) return fail("reject", state.error().message);
    auto info = session::find(state.value(), name);
    if (!info) return fail("reject", info.error().message);
    std::string raw_path;
    size_t hunk = 0;
    split_hunk(target_arg, &raw_path, &hunk);
    std::vector<std::string> rel;
    std::string bad;
    if (!normalize_path_args(info->meta.target, {raw_path}, &rel, &bad)) return cli::usage_error("reject", bad);
    if (rel.size() != 1 || rel[0].empty())
        return cli::usage_error("reject",
                                "give one changed path, not the target itself: " + base::display_path(raw_path));
    auto changes = capture::session_changes_as_owner(info.value(), false);
    if (!changes) return fail("reject", "session '" + info->meta.name + "': " + changes.error().message);
    auto sides = session_sides(info.value());
    if (!sides) return fail("reject", sides.error().message);
    auto rec = review::make_rejection(rel[0], hunk, reason, base::utc_now_rfc3339(), changes.value(),
                                      sides->session_side, sides->real_side);
    if (!rec) {
        // The commands with this session and path in them (they said 'layover
        // status NAME' and 'layover diff NAME --hunk-numbers -- PATH', literally).
        std::string msg = rec.error().message;
        if (msg.ends_with(" is not a change of this session"))
            msg += "; 'layover status " + info->meta.name + "' lists the paths to reject";
        const std::string generic = "'layover diff NAME --hunk-numbers -- PATH'";
        if (size_t at = msg.find(generic); at != std::string::npos)
            msg.replace(at, generic.size(),
                        "'layover diff " + info->meta.name + " --hunk-numbers -- " + base::display_path(rel[0]) + "'");
        return fail("reject", msg + "; nothing was recorded");
    }
    auto seq = session::add_rejection(info->dir, rec.value());
    if (!seq) return fail("reject", seq.error().message + "; nothing was recorded");
    review::RejectionState st;
    st.rec = rec.value();
    st.rec.seq = seq.value();
    st.in_force = true;
    st.hunk_now = hunk;
    std::printf("%s (session %s; 'layover apply' skips it now)\n", review::rejection_line(st).c_str(),
                info->meta.name.c_str());
    return 0;
}

int cmd_rejections(int argc, char** argv) {
    std::string name;
    bool as_json = false, named = false;  // named: a SESSION given, even an empty one (refused)
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") return help(kRejectionsUsage);
        if (a == "--json") as_json = true;
        else if (!a.empty() && a[0] == '-') return cli::unknown_option("rejections", a, kRejectionsUsage);
        else if (!named) name = a, named = true;
        else return cli::usage_error("rejections", "one SESSION only");
    }
    auto state = session::state_dir();
    if (!state) return fail("rejections", state.error().message);
    auto info = named ? session::find(state.value(), name) : session::latest(state.value());
    if (!info) return fail("rejections", info.error().message);
    auto recs = session::read_rejections(info->dir);
    if (!recs) return fail("rejections", recs.error().message);
    std::vector<review::RejectionState> states;
    if (!recs->list.empty()) {
        auto changes = capture::session_changes_as_owner(info.value(), false);
        if (!changes) return fail("rejections", "session '" + info->meta.name + "': " + changes.error().message);
        auto judged = session_rejections(info.value(), changes.value());
        if (!judged) return fail("rejections", judged.error().message);
        states = std::move(judged.value());
    }
    if (as_json) {
        std::string o = "{\"next_seq\": " + std::to_string(recs->next_seq) + ", \"rejections\": [";
        for (size_t i = 0; i < states.size(); i++) o += (i ? ",\n  " : "\n  ") + rejection_json(states[i]);
        std::printf("%s]}\n", o.c_str());
        return 0;
    }
    if (states.empty()) std::printf("no rejections in session %s\n", info->meta.name.c_str());
    for (const auto& s : states) std::printf("R  %s\n", review::rejection_line(s).c_str());
    return 0;
}
