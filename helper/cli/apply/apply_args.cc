// `layover apply`'s command line (helper/cli/apply/apply_args.h).
#include "helper/cli/apply/apply_args.h"

#include <unistd.h>

#include <cstdio>

#include "helper/base/text.h"
#include "helper/cli/apply/apply_shared.h"
#include "helper/cli/common/newest_session.h"
#include "helper/cli/common/usage.h"

namespace cli {

namespace {

const char kApplyUsage[] =
    "usage: layover apply SESSION|PATCH [--target DIR] [--dry-run] [--force] [--only PATH]...\n"
    "                     [--exclude GLOB]... [--yes] [--undo-to FILE] [--json] [--keep-undo N]\n"
    "                     [--keep-undo-days D] [--ignore GLOB]... [--no-default-ignores] [--include-ignored]\n"
    "                     [--hunks PATH:N[,M...]]... [--exclude-hunks PATH:N[,M...]]... [--conflict=markers]\n"
    "                     [--allow-secrets] [--include-rejected] [--upto N] [-p] [-- PATH...]\n"
    "Apply a session's changes (or a saved patch) to the real tree, all or nothing, with undo.\n"
    "  --target DIR               write to DIR (default: the session's tree; a patch from elsewhere needs it)\n"
    "  --dry-run                  list what would be written and the conflicts; write nothing\n"
    "  --yes                      no question (without a terminal apply refuses unless given)\n"
    "  --force                    overwrite conflicting paths (their versions are kept for undo)\n"
    "  --undo-to FILE             also write the undo record as a patch file ('layover undo FILE')\n"
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
    "Undo records kept per target: the newest N (default 20) and all younger than D days (default 30).\n";

void help_apply() {
    std::fputs(kApplyUsage, stdout);
    std::fputs(capture::kIgnoreFlagsHelp, stdout);
}

// A non-negative integer option value.
bool count_value(const std::string& v, size_t* out) {
    if (v.empty() || v.size() > 9 || v.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoul(v);
    return true;
}

}  // namespace

// One --hunks/--exclude-hunks value, its syntax checked.
base::Result<review::HunkPick> hunk_pick(const std::string& arg, bool exclude, std::string* error) {
    auto pick = review::parse_hunk_pick(arg);
    if (!pick.ok()) *error = (exclude ? "--exclude-hunks " : "--hunks ") + pick.error().message;
    return pick;
}

std::optional<int> parse_apply_args(int argc, char** argv, ApplyArgs* a) {
    for (int i = 1; i < argc; i++) {
        std::string v, arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            help_apply();
            return 0;
        }
        if (int r = capture::parse_ignore_flag(argc, argv, &i, &a->ignore, &v); r != 0) {
            if (r < 0) return cli::usage_error("apply", v);
            continue;
        }
        if (cli::parse_step_flag(argc, argv, &i, "--upto", &a->steps)) continue;
        if (arg == "--dry-run" || arg == "-n") a->opts.dry_run = true;
        else if (arg == "--force") a->opts.force = true;
        else if (arg == "--yes" || arg == "-y") a->yes = true;
        else if (arg == "--json") a->json_out = true;
        else if (arg == "--allow-secrets") a->allow_secrets = true;
        else if (arg == "--include-rejected") a->include_rejected = true;
        else if (arg == "-p" || arg == "--patch" || arg == "--interactive") a->walk = true;
        else if (take_value(argc, argv, i, "--target", &v)) a->opts.target = v;
        else if (take_value(argc, argv, i, "--only", &v)) a->opts.only.push_back(v);
        else if (take_value(argc, argv, i, "--exclude", &v)) a->opts.exclude.push_back(v);
        else if (take_value(argc, argv, i, "--undo-to", &v)) a->opts.undo_to = v;
        else if (take_value(argc, argv, i, "--hunks", &v)) a->hunk_args.emplace_back(v, false);
        else if (take_value(argc, argv, i, "--exclude-hunks", &v)) a->hunk_args.emplace_back(v, true);
        else if (take_value(argc, argv, i, "--conflict", &v) && v != "\x01") {
            if (v != "markers") return cli::usage_error("apply", "--conflict takes 'markers' (--conflict=markers)");
            a->opts.conflict_markers = true;
        } else if (take_value(argc, argv, i, "--keep-undo", &v) && v != "\x01") {
            if (!count_value(v, &a->opts.retention.keep))
                return cli::usage_error("apply", "--keep-undo takes a count, e.g. 20");
        } else if (take_value(argc, argv, i, "--keep-undo-days", &v) && v != "\x01") {
            size_t d = 0;
            if (!count_value(v, &d))
                return cli::usage_error("apply", "--keep-undo-days takes a number of days, e.g. 30");
            a->opts.retention.keep_days = static_cast<int64_t>(d);
        } else if (arg == "--") {
            // `apply -- NAME` (a name that starts with '-'), then PATH...
            if (i + 1 < argc && a->source.empty()) a->source = argv[++i];
            a->paths.assign(argv + i + 1, argv + argc);
            break;
        } else if (!arg.empty() && arg[0] == '-')
            return cli::unknown_option("apply", arg, std::string(kApplyUsage) + capture::kIgnoreFlagsHelp);
        else if (a->source.empty()) a->source = arg;
        else return cli::usage_error("apply", "one SESSION or PATCH only (got '" + arg + "' too)");
        if (v == "\x01") return cli::usage_error("apply", arg + " needs a value");
    }
    if (a->source.empty())
        return cli::usage_error("apply", "missing SESSION or PATCH" + cli::newest_session_hint("apply"));
    if (!a->steps.error.empty()) return cli::usage_error("apply", a->steps.error);
    absolute(&a->opts.target);
    absolute(&a->opts.undo_to);
    if (a->walk && (a->json_out || !a->hunk_args.empty()))
        return cli::usage_error("apply", "-p asks on a terminal: it takes neither --json nor --hunks/--exclude-hunks");
    if (a->walk && !::isatty(0))
        return cli::usage_error(
            "apply",
            "-p asks about each hunk on a terminal, and stdin is none; without one, choose hunks with "
            "--hunks PATH:N (numbers from 'layover diff --hunk-numbers')");
    // A malformed value is a usage error before anything else is asked for.
    for (const auto& [arg, exclude] : a->hunk_args)
        if (std::string bad; !hunk_pick(arg, exclude, &bad).ok()) return cli::usage_error("apply", bad);
    return std::nullopt;
}

}  // namespace cli
