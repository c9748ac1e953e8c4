// `layover apply` and `layover undo`: parse, confirm, print.
#include "review/apply/apply.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "capture/patch/known_bases.h"
#include "capture/patch/reader.h"
#include "capture/scan/session_scan.h"
#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/base/json/bytes.h"
#include "helper/base/text.h"
#include "helper/cli/apply_rejected.h"
#include "helper/cli/path_args.h"
#include "helper/cli/step_args.h"
#include "helper/cli/undo_list.h"
#include "helper/cli/verbs.h"
#include "helper/store/known_bases.h"
#include "helper/store/session.h"
#include "review/apply/target.h"
#include "review/prompt/hunk_walk.h"
#include "review/prompt/io.h"
#include "review/prompt/listing.h"
#include "review/prompt/risk_patch.h"
#include "review/prompt/risk_scan.h"
#include "review/undo/undo.h"

namespace {

using json = nlohmann::json;

struct Args {
    std::string source;
    review::ApplyOptions opts;
    capture::IgnoreOptions ignore;
    std::vector<std::string> paths;  // after --
    bool yes = false, json_out = false, allow_secrets = false, include_rejected = false;
    bool walk = false;                                    // -p: hunk by hunk
    std::vector<std::pair<std::string, bool>> hunk_args;  // (PATH:N,..., exclude?)
    cli::StepArgs steps;                                  // --upto N
};

int usage(const char* verb, const std::string& why) {
    std::fprintf(stderr, "layover: %s: %s; see 'layover %s --help'\n", verb, why.c_str(), verb);
    return 2;
}

void help_apply() {
    std::fputs(
        "usage: layover apply SESSION|PATCH [--target DIR] [--dry-run] [--force] [--only PATH]...\n"
        "                     [--exclude GLOB]... [--yes] [--undo-to FILE] [--json] [--keep-undo N]\n"
        "                     [--keep-undo-days D] [--ignore GLOB]... [--no-default-ignores] [--include-ignored]\n"
        "                     [--hunks PATH:N[,M...]]... [--exclude-hunks PATH:N[,M...]]... [--conflict=markers]\n"
        "                     [--allow-secrets] [--include-rejected] [--upto N] [-p] [-- PATH...]\n"
        "Apply a session's changes (or a saved patch) to the real tree, all or nothing, with undo.\n"
        "  --only PATH|GLOB, PATH...  apply only these (relative to the target; a directory brings its subtree)\n"
        "  --exclude GLOB             leave these out (wins over --only and PATH...)\n"
        "  --hunks PATH:N[,M...]      apply only these hunks of PATH (numbers as 'layover diff --hunk-numbers'\n"
        "                             prints them); the rest stays in the session; other files as usual\n"
        "  --exclude-hunks PATH:N     apply every hunk of PATH but these\n"
        "  --conflict=markers         a 3-way merge that overlaps writes git's conflict markers (exit 1)\n"
        "  --allow-secrets            apply files the agent wrote secrets into (--yes refuses them otherwise)\n"
        "  --include-rejected         apply what 'layover reject' kept out of the session's applies too\n"
        "  --upto N                   a session's steps 1..N only (its view at the end of step N; 'layover log')\n"
        "  -p, --patch, --interactive ask about each hunk (y n q a d s e ?) and each other change (y n q), as\n"
        "                             git add -p; on a terminal (without one: --hunks)\n"
        "Undo records kept per target: the newest N (default 20) and all younger than D days (default 30).\n",
        stdout);
    std::fputs(capture::kIgnoreFlagsHelp, stdout);
}

void help_undo() {
    std::fputs(
        "usage: layover undo UNDO [--target DIR] [--force] [--dry-run] [--json]\n"
        "       layover undo --last [--target DIR] [--force] [--dry-run] [--json]\n"
        "       layover undo --list [--target DIR] [--json]\n"
        "Put back what an apply changed. UNDO is the record apply printed (STATE/undo/DEV-INO/ID, or\n"
        "TARGET/.layover-undo/ID) or an undo patch written by 'apply --undo-to FILE'. --last undoes the\n"
        "newest apply on --target (default: $HOME); --list lists its records.\n",
        stdout);
}

// --opt VALUE or --opt=VALUE.
bool take_value(int argc, char** argv, int& i, const char* name, std::string* out) {
    size_t n = std::strlen(name);
    if (std::strncmp(argv[i], name, n) != 0) return false;
    if (argv[i][n] == '=') {
        *out = argv[i] + n + 1;
    } else if (argv[i][n] != '\0') {
        return false;
    } else {
        *out = i + 1 < argc ? argv[++i] : "";
    }
    // An empty value (`--target "$UNSET"`) is no value: never the default.
    if (out->empty()) *out = "\x01";  // missing value marker
    return true;
}

json conflicts_json(const std::vector<review::Conflict>& cs) {
    json a = json::array();
    for (const auto& c : cs) {
        json o = base::json::path_object(c.path);
        o["reason"] = c.reason;
        a.push_back(std::move(o));
    }
    return a;
}

json paths_json(const std::vector<std::string>& paths) {
    json a = json::array();
    for (const auto& p : paths) a.push_back(base::json::path_object(p));
    return a;
}

// running: a dry run of a session still running (its changes so far), said as "running": true.
void print_json(const review::ApplyReport* rep, const std::string& err, bool dry_run, uint64_t ignored = 0,
                bool running = false) {
    json o = {{"applied", rep ? paths_json(rep->applied) : json::array()},
              {"ignored", ignored},
              {"undo", rep && !rep->undo.empty() ? json(rep->undo) : json(nullptr)},
              {"conflicts", rep ? conflicts_json(rep->conflicts) : json::array()},
              {"error", err.empty() ? json(nullptr) : json(err)},
              {"dry_run", dry_run}};
    if (running) o["running"] = true;
    if (rep) {
        o["forced"] = conflicts_json(rep->forced);
        o["skipped"] = paths_json(rep->skipped);
        o["recovered"] = rep->recovered.empty() ? json(nullptr) : json(rep->recovered);
        o["undo_patch"] = rep->undo_patch.empty() ? json(nullptr) : json(rep->undo_patch);
        o["undo_pruned"] = rep->pruned.count;
        json partial = json::array();
        for (const auto& p : rep->partial) {
            json e = base::json::path_object(p.path);
            e["hunks"] = p.hunks;
            e["of"] = p.of;
            partial.push_back(std::move(e));
        }
        o["partial"] = std::move(partial);
        o["merged"] = paths_json(rep->merged);
        o["marked"] = paths_json(rep->marked);
        json mc = json::array();
        for (const auto& f : rep->merge_conflicts) {
            json e = base::json::path_object(f.path);
            json ranges = json::array();
            for (const auto& r : f.ranges)
                ranges.push_back({{"base", {r.base.first, r.base.count}},
                                  {"target", {r.ours.first, r.ours.count}},
                                  {"patch", {r.theirs.first, r.theirs.count}}});
            e["ranges"] = std::move(ranges);
            mc.push_back(std::move(e));
        }
        o["merge_conflicts"] = std::move(mc);
    }
    // ensure_ascii: every non-ASCII character as \uXXXX, so that even a dump
    // to a terminal is inert (C1 and bidi controls in names included).
    std::cout << o.dump(-1, ' ', true, json::error_handler_t::replace) << std::endl;
}

void print_conflicts(const char* verb, const review::ApplyReport& rep, const std::string& what) {
    std::fprintf(stderr, "layover: %s: %zu conflict%s; nothing was %s:\n", verb, rep.conflicts.size(),
                 rep.conflicts.size() == 1 ? "" : "s", what.c_str());
    for (const auto& c : rep.conflicts)
        std::fprintf(stderr, "  %s: %s\n", base::display_path(c.path).c_str(), c.reason.c_str());
    // Advice names only flags this verb accepts: undo has no --exclude/--only.
    if (std::string(verb) == "undo")
        std::fprintf(stderr, "fix: look at those paths; then re-run with --force to restore over them anyway\n");
    else
        std::fprintf(stderr,
                     "fix: look at those paths; then re-run with --force to overwrite them (the current versions are\n"
                     "     kept for undo), or leave them out with --exclude GLOB / pick others with --only PATH\n");
}

void print_notes(const char* verb, const review::ApplyReport& rep) {
    if (!rep.recovered.empty()) std::fprintf(stderr, "layover: %s: %s\n", verb, rep.recovered.c_str());
    for (const auto& c : rep.forced)
        std::fprintf(stderr, "layover: %s: overriding conflict (--force): %s: %s\n", verb,
                     base::display_path(c.path).c_str(), c.reason.c_str());
    for (const auto& p : rep.skipped)
        std::fprintf(stderr,
                     "layover: %s: not applied (not stored: a socket, or a real dir holding a hidden path): %s\n", verb,
                     base::display_path(p).c_str());
}

// " (hunks 1,3 of 5)" for a file applied in part.
std::string hunks_note(const review::ApplyReport& rep, const std::string& path) {
    for (const auto& m : rep.marked)
        if (m == path) return " (merged, with conflict markers)";
    for (const auto& m : rep.merged)
        if (m == path) return " (merged with changes made since)";
    for (const auto& p : rep.partial) {
        if (p.path != path) continue;
        std::string nums;
        for (size_t n : p.hunks) nums += (nums.empty() ? "" : ",") + std::to_string(n);
        return " (hunk" + std::string(p.hunks.size() == 1 ? " " : "s ") + nums + " of " + std::to_string(p.of) + ")";
    }
    return "";
}

// At most 200 paths, each with its change's letter (A, M, D, ...).
void print_list(const review::ApplyReport& rep, const capture::Manifest& man, const char* lead,
                const review::RiskContext& ctx) {
    constexpr size_t kShown = 200;
    std::unordered_map<std::string_view, const capture::Change*> changes;
    size_t n = std::min(rep.applied.size(), kShown);
    for (size_t i = 0; i < n; i++) changes.emplace(rep.applied[i], nullptr);
    for (const auto& c : man.changes)
        if (auto l = changes.find(c.path); l != changes.end()) l->second = &c;
    for (size_t i = 0; i < n; i++) {
        const capture::Change* c = changes[rep.applied[i]];
        std::printf("%s%c %s%s%s\n", lead, c ? capture::kind_letter(c->kind) : ' ',
                    base::display_path(rep.applied[i]).c_str(), hunks_note(rep, rep.applied[i]).c_str(),
                    c ? review::change_details(*c, ctx).c_str() : "");
    }
    if (rep.applied.size() > kShown) std::printf("  ... and %zu more\n", rep.applied.size() - kShown);
}

// One --hunks/--exclude-hunks value, its syntax checked.
base::Result<review::HunkPick> hunk_pick(const std::string& arg, bool exclude, std::string* error) {
    auto pick = review::parse_hunk_pick(arg);
    if (!pick.ok()) *error = (exclude ? "--exclude-hunks " : "--hunks ") + pick.error().message;
    return pick;
}

// --hunks/--exclude-hunks PATH:N[,M...]: PATH relative to the target (or absolute beneath it).
bool hunk_choices(const std::string& target, const std::vector<std::pair<std::string, bool>>& args,
                  review::HunkChoices* out, std::string* error) {
    for (const auto& [arg, exclude] : args) {
        auto pick = hunk_pick(arg, exclude, error);
        if (!pick.ok()) return false;
        std::vector<std::string> rel;
        if (!normalize_path_args(target, {pick->path}, &rel, error)) return false;
        if (rel.size() != 1 || rel[0].empty() || base::has_glob_chars(rel[0])) {
            *error = "--hunks takes one file's path, not a directory or glob: " + base::display_path(pick->path);
            return false;
        }
        auto& c = (*out)[rel[0]];
        auto& list = exclude ? c.leave : c.take;
        list.insert(list.end(), pick->numbers.begin(), pick->numbers.end());
    }
    return true;
}

// A session's file applied in part: its real content before and after are
// layover's own doing, not a change the session's copy went stale against.
void record_partial(const capture::Patch& patch, const review::ApplyReport& rep) {
    if (!patch.from_session() || rep.partial.empty()) return;
    auto state = session::state_dir();
    if (!state.ok()) return;
    auto info = session::find(*state, patch.manifest().session);
    if (!info.ok()) return;
    for (const auto& p : rep.partial)
        if (auto r = session::add_known_bases(info->dir, p.path, {p.before_fp, p.after_fp}); !r.ok())
            std::fprintf(stderr, "layover: apply: applied, but %s; the rest of %s may show as a conflict\n",
                         r.error().message.c_str(), base::display_path(p.path).c_str());
}

std::string secrets_refused(size_t n) {
    return std::to_string(n) +
           " secret(s) written by the agent; nothing was applied (look at them, then re-run with "
           "--allow-secrets, or leave those files out with --exclude)";
}

// apply --yes and secrets: the refusal, with each secret's line. rollback:
// the apply's own error when its rollback failed too (else "").
int refuse_secrets(const std::vector<std::string>& secrets, bool json_out, const std::string& rollback) {
    std::string msg = secrets_refused(secrets.size());
    std::fprintf(stderr, "layover: apply: %s:\n", msg.c_str());
    for (const auto& l : secrets) std::fprintf(stderr, "  %s\n", l.c_str());
    if (rollback.find("ROLLING BACK FAILED") != std::string::npos)
        std::fprintf(stderr, "layover: apply: %s\n", rollback.c_str());
    if (json_out) print_json(nullptr, msg, false);
    return 1;
}

bool confirm(const std::string& question) {
    std::fprintf(stderr, "%s [y/N] ", question.c_str());
    std::fflush(stderr);
    std::string line;
    if (!std::getline(std::cin, line)) return false;
    return line == "y" || line == "Y" || line == "yes" || line == "YES";
}

// A session applied: its fresh base records are kept (capture/patch/
// known_bases.h: an `undo` then another apply is no stale-copy conflict), and
// when the whole session was applied (no --only/--exclude/--hunks) its state becomes
// "applied".
void mark_session_applied(const capture::Patch& patch, const review::ApplyOptions& o, const std::string& undo) {
    if (!patch.from_session()) return;
    auto state = session::state_dir();
    if (!state.ok()) return;
    auto info = session::find(*state, patch.manifest().session);
    if (!info.ok()) return;
    if (auto k = capture::remember_bases(info->dir, patch.manifest()); !k.ok())
        std::fprintf(stderr, "layover: apply: applied, but %s\n", k.error().message.c_str());
    if (!o.only.empty() || !o.exclude.empty() || !o.hunks.empty()) {
        // What is left is what `sessions` counts now (the applied paths equal
        // the real tree, so they are no longer changes).
        auto n = capture::count_changes_in_child(info.value());
        (void)session::set_changes(info->dir, n.ok() ? n.value() : -1);
        return;
    }
    if (auto m = session::mark_applied(info->dir, undo); !m.ok())
        std::fprintf(stderr, "layover: apply: applied, but %s\n", m.error().message.c_str());
}

// A non-negative integer option value.
bool count_value(const std::string& v, size_t* out) {
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoul(v);
    return true;
}

// The tree an apply wrote, symlink-free, as the undo records name it.
std::string real_path(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
}

// Relative paths are taken from the caller's working directory.
void absolute(std::string* path) {
    if (path->empty() || (*path)[0] == '/') return;
    char cwd[4096];
    if (::getcwd(cwd, sizeof cwd)) *path = std::string(cwd) + "/" + *path;
}

// The supervisor pid of a session name's (not an existing file's) sandbox
// that still runs, else none. An apply of it is refused: the kernel leaves changes made
// under a mounted overlay undefined. A dry run writes nothing: it reads the
// session as status does, and says that it may still change.
std::optional<int64_t> running_session(const std::string& arg) {
    struct stat st {};
    if (::stat(arg.c_str(), &st) == 0 || !base::valid_session_name(arg)) return std::nullopt;
    auto state = session::state_dir();
    if (!state.ok()) return std::nullopt;
    auto info = session::find(*state, arg);
    if (!info.ok() || info->state != "running") return std::nullopt;
    return info->meta.pid;
}

enum class Walked { Chosen, Nothing, Failed };

// -p: walk the hunks on the terminal; the answers narrow opts as --only,
// --exclude and --hunks do.
Walked walk(const capture::Patch& patch, const std::string& target, review::ApplyOptions* opts) {
    base::Fd root(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!root.valid()) {
        std::fprintf(stderr, "layover: apply: cannot open the target %s: %s\n", base::display_path(target).c_str(),
                     std::strerror(errno));
        return Walked::Failed;
    }
    review::WalkOptions wo;
    wo.root = root.get();
    wo.filter = base::PathFilter(opts->only, opts->exclude);
    if (patch.from_session())
        if (auto state = session::state_dir(); state.ok())
            if (auto info = session::find(*state, patch.manifest().session); info.ok()) wo.session_dir = info->dir;
    review::InterruptGuard guard;
    auto w = review::walk_hunks(patch, wo);
    if (!w.ok()) {
        std::fprintf(stderr, "layover: apply: %s; nothing was applied\n", w.error().message.c_str());
        return Walked::Failed;
    }
    if (w->interrupted) {
        std::fputs("\nlayover: apply: interrupted; nothing was applied\n", stderr);
        return Walked::Failed;
    }
    if (w->taken == 0) {
        std::fputs("layover: apply: no change chosen; nothing was applied\n", stderr);
        return Walked::Nothing;
    }
    if (w->all) return Walked::Chosen;
    opts->only = w->only;
    opts->exclude.insert(opts->exclude.end(), w->exclude.begin(), w->exclude.end());
    opts->hunks = w->hunks;
    return Walked::Chosen;
}

}  // namespace

int cmd_apply(int argc, char** argv) {
    Args a;
    for (int i = 1; i < argc; i++) {
        std::string v, arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            help_apply();
            return 0;
        }
        if (int r = capture::parse_ignore_flag(argc, argv, &i, &a.ignore, &v); r != 0) {
            if (r < 0) return usage("apply", v);
            continue;
        }
        if (cli::parse_step_flag(argc, argv, &i, "--upto", &a.steps)) continue;
        if (arg == "--dry-run" || arg == "-n") a.opts.dry_run = true;
        else if (arg == "--force") a.opts.force = true;
        else if (arg == "--yes" || arg == "-y") a.yes = true;
        else if (arg == "--json") a.json_out = true;
        else if (arg == "--allow-secrets") a.allow_secrets = true;
        else if (arg == "--include-rejected") a.include_rejected = true;
        else if (arg == "-p" || arg == "--patch" || arg == "--interactive") a.walk = true;
        else if (take_value(argc, argv, i, "--target", &v)) a.opts.target = v;
        else if (take_value(argc, argv, i, "--only", &v)) a.opts.only.push_back(v);
        else if (take_value(argc, argv, i, "--exclude", &v)) a.opts.exclude.push_back(v);
        else if (take_value(argc, argv, i, "--undo-to", &v)) a.opts.undo_to = v;
        else if (take_value(argc, argv, i, "--hunks", &v)) a.hunk_args.emplace_back(v, false);
        else if (take_value(argc, argv, i, "--exclude-hunks", &v)) a.hunk_args.emplace_back(v, true);
        else if (take_value(argc, argv, i, "--conflict", &v) && v != "\x01") {
            if (v != "markers") return usage("apply", "--conflict takes 'markers' (--conflict=markers)");
            a.opts.conflict_markers = true;
        } else if (take_value(argc, argv, i, "--keep-undo", &v) && v != "\x01") {
            if (!count_value(v, &a.opts.retention.keep)) return usage("apply", "--keep-undo takes a count, e.g. 20");
        } else if (take_value(argc, argv, i, "--keep-undo-days", &v) && v != "\x01") {
            size_t d = 0;
            if (!count_value(v, &d)) return usage("apply", "--keep-undo-days takes a number of days, e.g. 30");
            a.opts.retention.keep_days = static_cast<int64_t>(d);
        } else if (arg == "--") {
            // `apply -- NAME` (a name that starts with '-'), then PATH...
            if (i + 1 < argc && a.source.empty()) a.source = argv[++i];
            a.paths.assign(argv + i + 1, argv + argc);
            break;
        } else if (!arg.empty() && arg[0] == '-')
            return usage("apply", "unknown option '" + base::display_path(arg) + "'");
        else if (a.source.empty()) a.source = arg;
        else return usage("apply", "one SESSION or PATCH only (got '" + arg + "' too)");
        if (v == "\x01") return usage("apply", arg + " needs a value");
    }
    if (a.source.empty()) return usage("apply", "missing SESSION or PATCH");
    if (!a.steps.error.empty()) return usage("apply", a.steps.error);
    absolute(&a.opts.target);
    absolute(&a.opts.undo_to);
    if (a.walk && (a.json_out || !a.hunk_args.empty()))
        return usage("apply", "-p asks on a terminal: it takes neither --json nor --hunks/--exclude-hunks");
    if (a.walk && !::isatty(0))
        return usage("apply",
                     "-p asks about each hunk on a terminal, and stdin is none; without one, choose hunks with "
                     "--hunks PATH:N (numbers from 'layover diff --hunk-numbers')");
    // A malformed value is a usage error before anything else is asked for.
    for (const auto& [arg, exclude] : a.hunk_args)
        if (std::string bad; !hunk_pick(arg, exclude, &bad).ok()) return usage("apply", bad);
    bool interactive = ::isatty(0) && !a.json_out;
    bool unconfirmed = !a.yes && !a.opts.dry_run && !interactive;

    auto fail = [&](const std::string& msg) {
        std::fprintf(stderr, "layover: apply: %s\n", msg.c_str());
        if (a.json_out) print_json(nullptr, msg, a.opts.dry_run);
        return 1;
    };
    std::optional<int64_t> running = running_session(a.source);
    if (running && !a.opts.dry_run)
        return fail("session " + a.source + " is still running (pid " + std::to_string(*running) +
                    "); stop it first (exit the sandboxed command), then re-run");
    if (running)
        std::fprintf(stderr,
                     "layover: apply: session %s is still running (pid %lld): this dry run shows its changes so "
                     "far, and they may still change; stop it before applying\n",
                     a.source.c_str(), static_cast<long long>(*running));
    auto range = cli::steps_of_source(a.source, a.steps, "apply --upto");
    if (!range.ok()) return fail(range.error().message);
    auto patch = capture::Patch::open_source(a.source, {}, a.ignore, *range);
    if (!patch.ok()) return fail(patch.error().message);
    std::string target = a.opts.target.empty() ? patch->manifest().target : a.opts.target;
    // PATH... narrows as --only does (both given: either selects).
    std::string bad;
    if (!normalize_path_args(target, a.paths, &a.opts.only, &bad)) return usage("apply", bad);
    if (!hunk_choices(target, a.hunk_args, &a.opts.hunks, &bad)) return usage("apply", bad);
    warn_unmatched_paths("apply", target, a.opts.only, patch->manifest().changes);
    // No terminal and no --yes: what needs no answer (the target) is checked
    // first, so that one refusal names every fix.
    if (unconfirmed) {
        if (auto t = review::open_target(a.opts.target, *patch); !t.ok())
            return usage("apply", t.error().message + "; and pass --yes: there is no terminal to ask on");
        return usage("apply",
                     "refusing to change the real tree without confirmation: there is no terminal to ask on; "
                     "pass --yes (or preview with --dry-run)");
    }
    if (a.walk) {  // the answers become the selection; rejections are asked again
        switch (walk(*patch, target, &a.opts)) {
            case Walked::Chosen: break;
            case Walked::Nothing: return 0;
            case Walked::Failed: return 1;
        }
    } else if (!a.include_rejected) {
        if (auto r = skip_rejected(*patch, target, &a.opts); !r) return fail(r.error().message);
    }

    // Secrets the agent wrote, in what this apply selects: named, never shown.
    base::PathFilter selected(a.opts.only, a.opts.exclude);
    auto selected_secrets = [&](review::RiskContext& c) {
        std::erase_if(c.secrets, [&](const auto& s) { return !selected.selects(s.first); });
        return review::secret_lines(c);
    };
    // `apply --yes` scans the contents as its staging streams them by (not
    // in a pass of its own) and refuses secrets before the commit point.
    bool tapped = a.yes && !a.opts.dry_run && !a.walk;
    review::PatchRiskScan scan(*patch, target);
    review::RiskContext ctx;
    std::vector<std::string> secrets;
    bool refused = false;
    if (tapped) {
        a.opts.tap = [&scan](const capture::Member& m) { return scan.visit(m); };
        a.opts.before_commit = [&]() -> base::Result<void> {
            scan.finish();
            secrets = selected_secrets(scan.context());
            if (secrets.empty() || a.allow_secrets) return base::Ok();
            refused = true;
            return base::error(secrets_refused(secrets.size()));
        };
    } else {
        ctx = review::risk_context_of_patch(*patch, target);
        secrets = selected_secrets(ctx);
        if (!secrets.empty() && !a.allow_secrets && a.yes && !a.opts.dry_run)
            return refuse_secrets(secrets, a.json_out, "");
    }

    if (a.walk && !secrets.empty() && !a.allow_secrets && !a.opts.dry_run) {
        std::fprintf(stderr, "layover: apply: the agent wrote %zu secret(s):\n", secrets.size());
        for (const auto& l : secrets) std::fprintf(stderr, "  %s\n", l.c_str());
        if (!confirm("Apply these secrets too?")) {
            std::fputs("layover: apply: cancelled; nothing was applied\n", stderr);
            return 1;
        }
    }
    if (!a.yes && !a.opts.dry_run && !a.walk) {
        review::ApplyOptions preview = a.opts;
        preview.dry_run = true;
        auto pre = review::apply_patch(*patch, preview);
        if (!pre.ok()) return fail(pre.error().message);
        if (!pre->conflicts.empty()) {
            print_conflicts("apply", *pre, "applied");
            return 1;
        }
        if (pre->applied.empty()) {
            std::printf("nothing to apply to %s\n", base::display_path(target).c_str());
            return 0;
        }
        print_notes("apply", *pre);
        print_list(*pre, patch->manifest(), "  ", ctx);
        std::fflush(stdout);
        if (!secrets.empty() && !a.allow_secrets) {
            std::fprintf(stderr, "layover: apply: the agent wrote %zu secret(s):\n", secrets.size());
            for (const auto& l : secrets) std::fprintf(stderr, "  %s\n", l.c_str());
            if (!confirm("Apply these secrets too?")) {
                std::fputs("layover: apply: cancelled; nothing was applied\n", stderr);
                return 1;
            }
        }
        if (!confirm("Apply " + std::to_string(pre->applied.size()) + " change(s) to " + base::display_path(target) +
                     "?")) {
            std::fputs("layover: apply: cancelled; nothing was applied\n", stderr);
            return 1;
        }
    }
    a.opts.progress = ::isatty(2) && !a.json_out;
    auto rep = review::apply_patch(*patch, a.opts);
    if (refused) return refuse_secrets(secrets, a.json_out, rep.ok() ? "" : rep.error().message);
    if (!rep.ok()) return fail(rep.error().message);
    if (tapped) {
        // Complete unless the apply ended before staging (nothing then lists the changes).
        if (!scan.complete() && rep->conflicts.empty() && !rep->applied.empty())
            ctx = review::risk_context_of_patch(*patch, target);
        else ctx = std::move(scan.context());
    }
    std::string export_error;
    if (!rep->undo_patch_error.empty())
        export_error = "applied, but the undo patch was not written: " + rep->undo_patch_error + "; the undo record " +
                       base::display_path(rep->undo) + " is kept and undoes this apply ('layover undo " +
                       base::display_path(rep->undo) + "')";
    if (rep->conflicts.empty() && !a.opts.dry_run && !rep->undo.empty()) record_partial(*patch, *rep);
    if (rep->conflicts.empty() && !a.opts.dry_run && !rep->undo.empty() && a.json_out)
        mark_session_applied(*patch, a.opts, rep->undo);
    if (a.json_out) {
        print_notes("apply", *rep);
        if (!export_error.empty()) std::fprintf(stderr, "layover: apply: %s\n", export_error.c_str());
        print_json(&rep.value(), export_error, a.opts.dry_run, patch->manifest().ignored, running.has_value());
        return rep->conflicts.empty() && export_error.empty() && rep->marked.empty() ? 0 : 1;
    }
    print_notes("apply", *rep);
    if (!rep->conflicts.empty()) {
        print_conflicts("apply", *rep, a.opts.dry_run ? "changed (dry run)" : "applied");
        return 1;
    }
    if (rep->applied.empty()) {
        std::printf("nothing to apply to %s\n", base::display_path(target).c_str());
        return 0;
    }
    if (a.opts.dry_run) {
        std::printf("dry run: would apply %zu change(s) to %s:\n", rep->applied.size(),
                    base::display_path(target).c_str());
        print_list(*rep, patch->manifest(), "  ", ctx);
        if (!secrets.empty() && !a.allow_secrets)
            std::printf("%zu secret(s) marked above: --yes refuses them without --allow-secrets\n", secrets.size());
        return 0;
    }
    std::printf("applied %zu change(s) to %s:\n", rep->applied.size(), base::display_path(target).c_str());
    mark_session_applied(*patch, a.opts, rep->undo);
    print_list(*rep, patch->manifest(), "  ", ctx);
    if (!rep->linked.empty()) {
        std::string names;
        for (size_t i = 0; i < rep->linked.size() && i < 5; i++)
            names += (i ? ", " : "") + base::display_path(rep->linked[i]);
        if (rep->linked.size() > 5) names += ", ...";
        std::printf(
            "hard links kept: %zu file(s) had other names on the real tree and were written in place, so "
            "every name sees the new content: %s\n",
            rep->linked.size(), names.c_str());
    }
    std::printf("undo record: %s\n", base::display_path(rep->undo).c_str());
    if (!rep->undo_patch.empty()) std::printf("undo patch: %s\n", base::display_path(rep->undo_patch).c_str());
    if (rep->pruned.count)
        std::printf("pruned %zu old undo record(s) of this target (--keep-undo, --keep-undo-days)\n",
                    rep->pruned.count);
    std::printf("undo with: %s\n", review::undo_command(real_path(target)).c_str());
    if (!export_error.empty()) {
        std::fflush(stdout);
        std::fprintf(stderr, "layover: apply: %s\n", export_error.c_str());
        return 1;
    }
    if (!rep->marked.empty()) {
        std::fflush(stdout);
        std::fprintf(
            stderr,
            "layover: apply: conflict markers written in %zu file(s); resolve them (undo with the line above)\n",
            rep->marked.size());
        return 1;
    }
    return 0;
}

int cmd_undo(int argc, char** argv) {
    std::string source;
    review::UndoOptions opts;
    bool json_out = false, last = false, list = false;
    for (int i = 1; i < argc; i++) {
        std::string v, arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            help_undo();
            return 0;
        }
        if (arg == "--force") opts.force = true;
        else if (arg == "--dry-run" || arg == "-n") opts.dry_run = true;
        else if (arg == "--json") json_out = true;
        else if (arg == "--last") last = true;
        else if (arg == "--list") list = true;
        else if (arg == "--yes" || arg == "-y") continue;
        else if (take_value(argc, argv, i, "--target", &v)) opts.target = v;
        else if (!arg.empty() && arg[0] == '-')
            return usage("undo", "unknown option '" + base::display_path(arg) + "'");
        else if (source.empty()) source = arg;
        else return usage("undo", "one UNDO record only");
        if (v == "\x01") return usage("undo", arg + " needs a value");
    }
    if (last || list) {
        if (!source.empty() || (last && list)) return usage("undo", "give one of UNDO, --last or --list");
        auto target = undo_target(opts.target);
        if (!target.ok()) return usage("undo", target.error().message);
        if (list) return undo_list(*target, json_out);
        auto rec = newest_record(*target);
        if (!rec.ok()) {
            std::fprintf(stderr, "layover: undo: %s\n", rec.error().message.c_str());
            return 1;
        }
        source = *rec;
        opts.target = *target;
    }
    if (source.empty())
        return usage("undo", "missing UNDO (the record path 'layover apply' printed), --last or --list");
    auto fail = [&](const std::string& msg) {
        std::fprintf(stderr, "layover: undo: %s\n", msg.c_str());
        if (json_out) print_json(nullptr, msg, opts.dry_run);
        return 1;
    };
    base::Result<review::ApplyReport> rep = base::error("");
    if (review::is_undo_record(source)) {
        rep = review::undo_record(source, opts);
    } else {
        // An undo patch exported with --undo-to: a conflict-checked apply
        // that leaves no record of its own and retires the spent one.
        auto patch = capture::Patch::open(source);
        if (!patch.ok()) return fail(patch.error().message);
        if (patch->manifest().kind != "undo")
            return fail(base::display_path(source) +
                        " is an ordinary patch, not an undo patch (written by "
                        "'apply --undo-to') or undo record; to apply it use 'layover apply " +
                        base::display_path(source) + "'");
        review::ApplyOptions ao;
        ao.target = opts.target;
        absolute(&ao.target);
        ao.force = opts.force;
        ao.dry_run = opts.dry_run;
        ao.as_undo = true;
        rep = review::apply_patch(*patch, ao);
    }
    if (!rep.ok()) return fail(rep.error().message);
    print_notes("undo", *rep);
    if (json_out) {
        print_json(&rep.value(), "", opts.dry_run);
        return rep->conflicts.empty() ? 0 : 1;
    }
    if (!rep->conflicts.empty()) {
        print_conflicts("undo", *rep, "restored");
        return 1;
    }
    std::printf("%s %zu path(s)\n", opts.dry_run ? "dry run: would restore" : "restored", rep->applied.size());
    for (const auto& p : rep->applied) std::printf("  %s\n", base::display_path(p).c_str());
    if (!rep->retired.empty())
        std::printf("removed the spent undo record %s\n", base::display_path(rep->retired).c_str());
    if (!rep->undo.empty())
        std::printf("the versions this replaced are kept in %s\n", base::display_path(rep->undo).c_str());
    return 0;
}
