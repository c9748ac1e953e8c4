// Verb entry points for capture: save, show (status: cli_status.cc). They parse, print and
// pick the exit code; the work is in the library.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "capture/patch/manifest.h"
#include "capture/patch/reader.h"
#include "capture/patch/save.h"
#include "capture/scan/entry/summary.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "helper/cli/apply/apply_rejected.h"
#include "helper/cli/common/newest_session.h"
#include "helper/cli/common/path_args.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/cli/patch/patch_contents.h"
#include "helper/cli/patch/patch_out.h"
#include "helper/cli/patch/patch_steps.h"
#include "helper/cli/session/session_rejections.h"
#include "helper/cli/session/session_risks.h"
#include "helper/store/session/session.h"
#include "review/diff/pager.h"
#include "review/prompt/content_risk.h"
#include "review/prompt/listing.h"
#include "review/prompt/rejected_patch.h"
#include "review/prompt/risk_patch.h"
#include "review/prompt/risk_scan.h"
#include "review/prompt/save_secrets.h"

namespace {

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

// --help prints TEXT.
int help(const char* text) {
    std::fputs(text, stdout);
    return 0;
}

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

const char kSaveUsage[] =
    "usage: layover save SESSION -o|--output FILE.tar.zst [--ignore GLOB]... [--no-default-ignores] "
    "[--include-ignored]\n"
    "                    [--no-originals] [--include-rejected] [--upto N] [-- PATH...]\n"
    "  Write the session's changes as a patch (created 0600, atomically): what 'layover status' shows.\n"
    "  --upto N: only steps 1..N (the session's view at the end of step N; 'layover log' numbers them)\n"
    "  --no-originals: leave out the base content of modified text files (kept by default, for a 3-way merge)\n"
    "  --include-rejected: keep what 'layover reject' rejected (left out by default, as apply skips it)\n"
    "  PATH...: only these paths (relative to the target; a directory brings its subtree) or globs\n";
const char kShowUsage[] =
    "usage: layover show FILE.tar.zst [--json] [--expand] [--no-pager] [--steps] [--contents] [--max-members N]\n"
    "                    [--max-stored-bytes N] [--max-logical-bytes N] [--max-name-len N] [--max-pax-header N]\n"
    "  Validate a patch and print its changes.\n"
    "  --steps: the session's steps the patch carries, newest first (as 'layover log')\n"
    "  --contents: every file it writes with its bytes, as JSON (base64); SESSION too (read by layover\n"
    "              from the session's layers, never through the sandbox)\n";

// A name that promises another format (x.zip, x.patch): the file is still
// a zstd-compressed tar, layover's patch; said once the save is done.
void warn_suffix(const std::string& out, const std::string& name) {
    std::string low = out;
    for (auto& c : low) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto ends = [&](const char* s) {
        size_t n = std::strlen(s);
        return low.size() > n && low.compare(low.size() - n, n, s) == 0;
    };
    if (ends(".patch") || ends(".diff"))
        std::fprintf(stderr,
                     "layover: save: note: %s is layover's patch (a zstd-compressed tar), not a text diff; "
                     "'layover diff %s > %s' writes one\n",
                     base::display_path(out).c_str(), name.c_str(), base::display_path(out).c_str());
    else if (!ends(".zst"))
        for (const char* s : {".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z"})
            if (ends(s)) {
                std::fprintf(stderr,
                             "layover: save: note: %s is a zstd-compressed tar whatever its name; "
                             "FILE.tar.zst says what it is\n",
                             base::display_path(out).c_str());
                break;
            }
}

// What a person rejected (`layover reject`) and is still in force is left
// out, as apply skips it: said on stderr. Judged on the session as it is now.
base::Result<void> leave_out_rejected(const session::Info& info, capture::SaveOptions* so) {
    if (!has_rejections(info)) return base::Ok();
    TRY(auto changes, capture::session_changes_as_owner(info, false, nullptr, so->ignore));
    TRY(auto recs, session::read_rejections(info.dir));
    std::vector<std::string> skipped, superseded;
    {
        TRY(SessionSides sides, session_sides(info));  // closed before the save opens the trees again
        TRY(auto states, review::judge_rejections(recs.list, changes, sides.session_side, sides.real_side));
        TRY(skipped, review::leave_out_rejected(states, sides.session_side, sides.real_side, so, &superseded));
    }
    say_rejected("save: leaving out", "--include-rejected keeps them", "save: not left out", skipped, superseded);
    return base::Ok();
}

}  // namespace

int cmd_save(int argc, char** argv) {
    std::string name, out, err;
    capture::SaveOptions so;
    std::vector<std::string> paths;
    cli::StepArgs step_args;
    bool include_rejected = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (int r = capture::parse_ignore_flag(argc, argv, &i, &so.ignore, &err); r != 0) {
            if (r < 0) return cli::usage_error("save", err);
            continue;
        }
        if (cli::parse_step_flag(argc, argv, &i, "--upto", &step_args)) continue;
        if (a == "--") {
            paths.assign(argv + i + 1, argv + argc);
            break;
        }
        if (a == "-h" || a == "--help") {
            help(kSaveUsage);
            std::fputs(capture::kIgnoreFlagsHelp, stdout);
            return 0;
        }
        if (a == "--no-originals") {
            so.max_original = 0;
        } else if (a == "--include-rejected") {
            include_rejected = true;
        } else if (a == "-o" || a == "--output") {
            if (i + 1 >= argc) return cli::usage_error("save", a + " needs a file name");
            out = argv[++i];
        } else if (a.rfind("--output=", 0) == 0) {
            out = a.substr(9);
        } else if (a.rfind("-o", 0) == 0 && a.size() > 2) {
            out = a.substr(2);
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("save", a, std::string(kSaveUsage) + capture::kIgnoreFlagsHelp);
        } else if (name.empty()) {
            name = a;
        } else {
            return cli::usage_error("save", "more than one session given");
        }
    }
    if (name.empty()) {
        std::string hint = cli::newest_session_hint("save", " -o FILE.tar.zst");
        return cli::usage_error("save",
                                "missing SESSION" + (hint.empty() ? " (list them with 'layover sessions')" : hint));
    }
    if (out.empty()) return cli::usage_error("save", "no output file; add -o FILE.tar.zst");
    if (std::string other = cli::other_file_at(out); !other.empty()) return fail("save: " + other);
    if (!step_args.error.empty()) return cli::usage_error("save", step_args.error);
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto info = session::find(state.value(), name);
    if (!info) return fail(info.error().message);
    if (!normalize_path_args(info->meta.target, paths, &so.only, &err)) return cli::usage_error("save", err);
    if (step_args.given()) {
        auto range = cli::resolve_steps(step_args, info.value(), "save --upto");
        if (!range) return fail(range.error().message);
        so.steps = range.value();
    }
    // --upto saves the steps as they were: rejections judge the session now.
    if (!include_rejected && !step_args.given())
        if (auto lr = leave_out_rejected(info.value(), &so); !lr)
            return fail("save: rejections of session '" + info->meta.name + "': " + lr.error().message);
    review::scan_saved_secrets(&so);
    std::string secrets;
    std::vector<std::string> unmatched;
    auto r = capture::save_session(info.value(), out, so, &secrets, &unmatched);
    if (!r) return fail(r.error().message);
    warn_unmatched("save", info->meta.target, lister_of(info->meta.name, true), unmatched);
    std::fprintf(stderr, "layover: saved session '%s' to %s\n", info->meta.name.c_str(), out.c_str());
    warn_suffix(out, info->meta.name);
    char real[PATH_MAX];
    if (auto m = session::mark_saved(info->dir, ::realpath(out.c_str(), real) ? real : out); !m)
        std::fprintf(stderr, "layover: save: the patch is written, but %s\n", m.error().message.c_str());
    review::warn_saved_secrets(secrets);
    return 0;
}

int cmd_show(int argc, char** argv) {
    bool as_json = false, expand = false, no_pager = false, with_steps = false, contents = false;
    std::string file;
    capture::Limits limits;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i], err;
        int lf = capture::parse_limit_flag(argc, argv, &i, &limits, &err);
        if (lf < 0) return cli::usage_error("show", err);
        if (lf > 0) continue;
        if (a == "--json") as_json = true;
        else if (a == "--expand") expand = true;
        else if (a == "--no-pager") no_pager = true;
        else if (a == "--steps") with_steps = true;
        else if (a == "--contents") contents = true;
        else if (a == "-h" || a == "--help") return help(kShowUsage);
        else if (!a.empty() && a[0] == '-' && a != "-") return cli::unknown_option("show", a, kShowUsage);
        else if (file.empty()) file = a;
        else return cli::usage_error("show", "more than one patch given");
    }
    if (file.empty()) return cli::usage_error("show", "missing FILE.tar.zst (a patch 'layover save' wrote)");
    if (contents) {
        auto src = capture::Patch::open_source(file, limits);
        if (!src) return fail(src.error().message);
        auto r = print_patch_contents(src.value());
        return r ? 0 : fail("show --contents: " + r.error().message);
    }
    auto p = capture::Patch::open(file, limits);
    if (!p) {
        // `show SESSION` for `status SESSION`: no such file, but a session of that name.
        struct stat st;
        if (auto state = session::state_dir();
            state && ::lstat(file.c_str(), &st) != 0 && base::valid_session_name(file) && session::find(*state, file))
            return fail("'" + file + "' is a session, not a patch file: 'layover status " + file +
                        "' lists its changes, 'layover save " + file + " -o FILE.tar.zst' writes it as a patch");
        return fail(p.error().message);
    }
    if (with_steps) return print_patch_steps(p.value(), as_json);
    const auto& m = p->manifest();
    // A patch from someone else: where it writes, modes, sizes, risks.
    auto ctx = review::risk_context_of_patch(p.value());
    if (as_json) {
        print(capture::changes_to_json_text(m.changes,
                                            [&](const capture::Change& c) { return review::risks_of(c, ctx); }));
        return 0;
    }
    std::set<std::string> stale;
    for (const auto& b : m.base)
        if (b.stale) stale.insert(b.path);
    review::PagedStdout pager(!no_pager && ::isatty(1) == 1, false);
    print(review::target_line(m) + "\n");
    print(capture::summary_text(m.changes, stale, !expand, m.ignored, true,
                                [&](const capture::Change& c) { return review::change_details(c, ctx); }));
    return 0;
}
