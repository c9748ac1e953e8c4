// `layover status`: built into the `layover` binary itself (it needs no
// libarchive/libzstd, whose loading would cost more than the walk).
#include <malloc.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "capture/patch/manifest.h"
#include "capture/scan/entry/summary.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/base/glob.h"
#include "helper/base/text.h"
#include "helper/base/thread.h"
#include "helper/cli/common/config.h"
#include "helper/cli/common/path_args.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/cli/session/session_rejections.h"
#include "helper/cli/session/session_risks.h"
#include "helper/sandbox/policy/scratch.h"
#include "helper/store/session/session.h"
#include "review/diff/pager.h"
#include "review/prompt/listing.h"

namespace {

const char kStatusUsage[] =
    "usage: layover status [SESSION] [--json] [--risk] [--expand] [--outside] [--no-pager] [--ignore GLOB]...\n"
    "                      [--no-default-ignores] [--include-ignored] [--step N | --steps N..M] [-- PATH...]\n"
    "  The changes of a running or ended session (default: the most recent).\n"
    "  --step N, --steps N..M  the changes those steps alone made, against the view just before them\n"
    "  --risk     list only the changes marked ! (secrets, startup files, hooks, ...: docs/review.md)\n"
    "  --expand   list every path (new and deleted directories otherwise take one line each)\n"
    "  --outside  list what the session wrote outside the target (scratch layers; never applied)\n"
    "  --no-pager print straight to the terminal (by default a long listing goes through $PAGER)\n"
    "  PATH...    only these paths (relative to the target; a directory brings its subtree) or globs\n";

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

int help() {
    std::fputs(kStatusUsage, stdout);
    std::fputs(capture::kIgnoreFlagsHelp, stdout);
    return 0;
}

void print(const std::string& s) { std::fwrite(s.data(), 1, s.size(), stdout); }

constexpr size_t kSaverStack = size_t{1} << 20;

}  // namespace

int cmd_status(int argc, char** argv) {
    bool as_json = false, outside = false, expand = false, no_pager = false, risky_only = false;
    std::string name, err;
    bool named = false;  // a SESSION given, even an empty one (refused): else the most recent
    capture::IgnoreOptions ignore;
    std::vector<std::string> paths;
    cli::StepArgs step_args;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (int r = capture::parse_ignore_flag(argc, argv, &i, &ignore, &err); r != 0) {
            if (r < 0) return cli::usage_error("status", err);
            continue;
        }
        if (cli::parse_step_flag(argc, argv, &i, "--step --steps", &step_args)) continue;
        if (a == "--") {
            paths.assign(argv + i + 1, argv + argc);
            break;
        }
        if (a == "--json") as_json = true;
        else if (a == "--outside") outside = true;
        else if (a == "--risk") risky_only = true;
        else if (a == "--expand") expand = true;
        else if (a == "--no-pager") no_pager = true;
        else if (a == "-h" || a == "--help") return help();
        else if (!a.empty() && a[0] == '-')
            return cli::unknown_option("status", a, std::string(kStatusUsage) + capture::kIgnoreFlagsHelp);
        else if (!named) name = a, named = true;
        else return cli::usage_error("status", "more than one session given");
    }
    if (!step_args.error.empty()) return cli::usage_error("status", step_args.error);
    // The walk's pieces, the change list and the caches are MiB-sized and
    // freed as the next is built: kept in the heap, not unmapped and faulted
    // in afresh (an unmap also stalls the other threads' page faults), as
    // layover-patch keeps its buffers (docs/performance.md, "Status, fifth pass").
    ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
    ::mallopt(M_TRIM_THRESHOLD, 128 << 20);
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto info = named ? session::find(state.value(), name) : session::latest(state.value());
    if (!info) {
        // `status FILE` for `show FILE`, as `show SESSION` names `status`: a
        // file that is no session's name.
        struct stat st;
        if (!name.empty() && ::stat(name.c_str(), &st) == 0 && S_ISREG(st.st_mode))
            return fail(base::display_path(name) + " is a patch file, not a session: 'layover show " +
                        base::display_path(name) + "' lists its changes");
        return fail(info.error().message);
    }
    // Which one, when none was named (its output never names it; --json's reader knows).
    if (!named && !as_json)
        std::fprintf(stderr, "layover: status of session '%s', the most recent ('layover sessions' lists them)\n",
                     base::display_path(info->meta.name).c_str());
    capture::StepRange range;
    if (step_args.given()) {
        auto r = cli::resolve_steps(step_args, info.value(), "status");
        if (!r) return fail(r.error().message);
        range = r.value();
    }
    const char* home = std::getenv("HOME");
    // On a terminal, as git does: `less -FRX` quits at once on a short listing.
    review::PagedStdout pager(!as_json && !no_pager && ::isatty(1) == 1, false);
    if (outside) {
        // Writes outside the target (scratch layers): listed, never applied.
        auto s = scratch::summarize(info->dir, info->meta.outside, home ? home : "");
        if (!s) return fail("status --outside of session '" + info->meta.name + "': " + s.error().message);
        for (const auto& p : s->paths) print(p + "\n");
        return 0;
    }
    std::string outside_line;
    if (auto s = scratch::summarize(info->dir, info->meta.outside, home ? home : ""); s && s->files)
        outside_line = scratch::summary_line(*s) + " ('layover status --outside' lists them)\n";
    // Single-threaded here, and nothing after the walk needs our own identity.
    std::vector<std::string> hidden;
    uint64_t ignored = 0;
    // Rejections are judged on the full change records (the summary's leave some modes out).
    bool rejected = has_rejections(info.value());
    capture::StatusCache cache;  // written after the risk marks added theirs
    // The risk marks' reads ride on the walk (not with PATH...: only those are read).
    review::WalkRiskReader walk;
    // Stored as the listing is made (the verdicts as soon as the walk is over).
    cache.store_early = paths.empty();
    auto changes = capture::session_changes_as_owner(info.value(), !as_json && !rejected, &hidden, ignore, &ignored,
                                                     range, &cache, paths.empty() ? &walk : nullptr);
    // The snapshot is serialized from `changes` meanwhile: joined before they change or go.
    struct SnapshotJoin {
        capture::StatusCache& c;
        ~SnapshotJoin() { c.finish_snapshot(); }
    } snapshot_join{cache};
    if (!changes) return fail("status of session '" + info->meta.name + "': " + changes.error().message);
    auto rejections = rejected
                          ? session_rejections(info.value(), changes.value())
                          : base::Result<std::vector<review::RejectionState>>(std::vector<review::RejectionState>{});
    if (!rejections) return fail("status of session '" + info->meta.name + "': " + rejections.error().message);
    if (!paths.empty()) {
        cache.finish_snapshot();
        std::string bad;
        if (!select_paths(info->meta.target, lister_of(info->meta.name, true), paths, &changes.value(), &bad))
            return cli::usage_error("status", bad);
        // The R lines too: only the rejections of the paths asked about.
        std::vector<std::string> rel;
        normalize_path_args(info->meta.target, paths, &rel, &bad);
        base::PathFilter filter(rel, {});
        std::erase_if(rejections.value(), [&](const review::RejectionState& r) { return !filter.selects(r.rec.path); });
    }
    auto ctx = session_risks(info.value(), changes.value(), range, cache.verdicts.get(), &walk, cache.trees);
    // With PATH...: what it knows of the other files would be dropped. Written
    // on a thread of its own while the listing is made and printed (it reads
    // only the cache, which nothing changes any more).
    base::StackThread saver;
    if (risky_only) cache.finish_snapshot();  // before the list shrinks (the saver joins it otherwise)
    if (paths.empty() && !cache.from_snapshot && !saver.start([&] { cache.store(); }, kSaverStack)) cache.store();
    if (risky_only)
        std::erase_if(changes.value(), [&](const capture::Change& c) { return review::risks_of(c, ctx).empty(); });
    // A stale copy (the real file changed after the copy-up), marked as show and diff mark it.
    std::set<std::string> stale;
    for (const auto& c : changes.value())
        if (c.stale) stale.insert(c.path);
    if (as_json)
        print(capture::changes_to_json_text(
            changes.value(), [&](const capture::Change& c) { return review::risks_of(c, ctx); },
            [&](const capture::Change& c) {
                return rejected_field(rejections.value(), c.path) +
                       (c.stale ? ", \"stale\": true" : ", \"stale\": false");
            }));
    else
        print(capture::summary_text(changes.value(), stale, !expand, risky_only ? 0 : ignored, false,
                                    [&](const capture::Change& c) { return review::risk_marks(c, ctx); }));
    std::string notes;
    for (const auto& [path, n] : capture::hard_linked_on_real(changes.value()))
        notes += "hard-linked on the real tree: " + base::display_path(path) + " (" + std::to_string(n) +
                 " names; inside, the other names kept the old content; apply writes it in place so all see the "
                 "new one)\n";
    // Written inside under a hidden path: never captured, but not silently.
    if (!hidden.empty()) {
        notes += "not captured (hidden paths):";
        for (const auto& h : hidden) notes += " " + base::display_path(h);
        notes += "\n";
    }
    if (as_json) {
        // The text form's notes, on stderr: the MCP `changes` tool shows them with the same snapshot.
        if (ignored && !risky_only) notes.insert(0, capture::ignored_line(ignored) + "\n");
        std::fputs((notes + outside_line).c_str(), stderr);
        return 0;
    }
    print(notes);
    for (const auto& r : rejections.value()) print("R  " + review::rejection_line(r) + "\n");
    print(outside_line);
    // The change list, the risk marks and the cache are plain memory and fds:
    // the exit drops them at once (their destructors cost ~3 ms of a 10,000-file
    // status, on its critical path), as save's capture process does.
    saver.join();
    pager.finish();
    std::_Exit(cli::checked_stdout("status", 0));
}
