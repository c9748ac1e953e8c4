// `layover diff [SESSION|PATCH] [--stat] [--name-status] [--color[=WHEN]] [--no-pager] [-- PATH...]`
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "capture/scan/entry/ignore.h"
#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/base/term.h"
#include "helper/base/text.h"
#include "helper/cli/common/path_args.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/store/session/session.h"
#include "review/diff/show.h"
#include "review/prompt/listing.h"
#include "review/prompt/risk_patch.h"
#include "review/prompt/secrets.h"

namespace {

const char kUsage[] =
    "usage: layover diff [SESSION|PATCH] [--stat | --name-status] [--color[=auto|always|never]] [--no-pager]\n"
    "                    [--hunk-numbers] [--mask-secrets] [--flat] [--ignore GLOB]... [--no-default-ignores]\n"
    "                    [--include-ignored] [--step N | --steps N..M] [--target DIR] [--] [PATH...]\n"
    "       layover diff A B [...]: from session A's final view to session B's (best-of-N runs from one fork)\n"
    "  SESSION defaults to the most recent one, as for 'layover status'\n"
    "  --step N, --steps N..M: the changes those steps of SESSION alone made, against the view just before them\n"
    "  PATH...: paths relative to the target (a directory brings its subtree) or globs\n"
    "  --hunk-numbers: number each file's hunks (@@ ... @@ hunk N), as 'apply --hunks PATH:N' takes them\n"
    "  --mask-secrets: print secrets (tokens, keys: docs/review.md) as their prefix and '…'\n"
    "  --target DIR: compare a patch file with DIR instead of the tree it names (a reviewer's copy)\n"
    "  --flat: one lump; by default a session (or patch) of several steps is grouped by the last step that\n"
    "          touched each file, under '# step N: LABEL' lines that git apply ignores\n";

int usage_error(const std::string& msg) { return cli::usage_error("diff", msg); }

}  // namespace

int cmd_diff(int argc, char** argv) {
    review::ShowOptions opts;
    std::string source;
    bool source_given = false;  // a SESSION or PATCH given, even an empty one (refused)
    base::ColorWhen color = base::ColorWhen::Auto;
    bool no_pager = false, mask = false;
    std::vector<std::string> raw_paths;
    bool dashdash = false;
    size_t dashdash_at = SIZE_MAX;  // raw_paths before it came before --
    capture::IgnoreOptions ignore;
    std::string err;
    cli::StepArgs step_args;
    std::string target;  // a patch file's tree, when not the one it names
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (int r = dashdash ? 0 : capture::parse_ignore_flag(argc, argv, &i, &ignore, &err); r != 0) {
            if (r < 0) return usage_error(err);
            continue;
        }
        if (!dashdash && cli::parse_step_flag(argc, argv, &i, "--step --steps", &step_args)) continue;
        if (dashdash) {
            raw_paths.push_back(a);
        } else if (a == "--") {
            dashdash = true;
            dashdash_at = raw_paths.size();
        } else if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            std::fputs(capture::kIgnoreFlagsHelp, stdout);  // as status, save and apply list them
            return 0;
        } else if (a == "--stat") {
            opts.format = review::ShowOptions::Format::Stat;
        } else if (a == "--name-status") {
            opts.format = review::ShowOptions::Format::NameStatus;
        } else if (a == "--color") {
            color = base::ColorWhen::Always;
        } else if (a.compare(0, 8, "--color=") == 0) {
            if (!base::parse_color_when(a.substr(8), &color))
                return usage_error("--color takes auto, always or never, not '" + a.substr(8) + "'");
        } else if (a == "--no-color") {
            color = base::ColorWhen::Never;
        } else if (a == "--hunk-numbers") {
            opts.hunk_numbers = true;
        } else if (a == "--no-pager") {
            no_pager = true;
        } else if (a == "--mask-secrets") {
            mask = true;
        } else if (a == "--flat") {
            opts.flat = true;
        } else if (a == "--target" || a.rfind("--target=", 0) == 0) {
            if (a == "--target" && i + 1 >= argc) return usage_error("--target needs a directory");
            target = a == "--target" ? argv[++i] : a.substr(9);
            if (target.empty()) return usage_error("--target needs a directory");
        } else if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("diff", a, kUsage);
        } else if (!source_given) {
            source = a, source_given = true;
        } else {
            raw_paths.push_back(a);
        }
    }
    if (source_given && source.empty()) {  // `diff "$S"` with S unset: never the most recent session
        std::fprintf(stderr,
                     "layover: diff: the session or patch named is empty (an unset variable?); name one: "
                     "'layover sessions' lists them\n");
        return 2;
    }
    bool named = source_given;  // else the most recent session, never a file of its name here
    if (!named) {               // as status and log: the most recent session
        auto state = session::state_dir();
        auto s = state ? session::latest(*state) : base::Result<session::Info>(state.error());
        if (!s) {
            std::fprintf(stderr, "layover: diff: %s\n", s.error().message.c_str());
            return 2;
        }
        source = s->meta.name;
        std::fprintf(stderr, "layover: diff of session '%s', the most recent ('layover sessions' lists them)\n",
                     base::display_path(source).c_str());
    }
    if (!step_args.error.empty()) return usage_error(step_args.error);

    bool tty = review::stdout_is_tty();
    opts.color = base::color_for_fd(1, color);
    // Escaping follows the destination, not the colors: a terminal gets
    // visible control characters, a pipe gets the exact bytes git applies.
    opts.escape = tty;
    opts.page = tty && !no_pager;
    opts.width = review::terminal_width();

    // An error exits 2, as diff(1) does: 1 would read as "there are changes".
    std::string first = source;  // diff A B: the changes are the ones `compare A B` lists
    if (std::string why = cli::step_flag_on_patch(source, step_args, "--step and --steps take"); !why.empty())
        return usage_error(why);
    auto range = cli::diff_range(&source, &raw_paths, dashdash_at, step_args);
    if (!range) {
        std::fprintf(stderr, "layover: diff: %s\n", range.error().message.c_str());
        return 2;
    }
    auto old_view = cli::old_side_view(source, *range);
    if (!old_view) {
        std::fprintf(stderr, "layover: diff: %s\n", old_view.error().message.c_str());
        return 2;
    }
    opts.old_root = old_view->get();
    // The step records describe the whole session: no grouping of a compare or a step range.
    if (!range->all() || !range->against.empty()) opts.flat = true;
    auto patch = named ? capture::Patch::open_source(source, {}, ignore, *range)
                       : capture::Patch::open_session(source, {}, ignore, *range);
    if (!patch) {
        std::fprintf(stderr, "layover: diff %s: %s\n", base::display_path(source).c_str(),
                     patch.error().message.c_str());
        return 2;
    }
    base::Fd target_fd;
    if (!target.empty()) {
        if (patch->from_session())
            return usage_error("--target is for a patch file; a session diffs against its own target");
        int fd = ::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0) {
            std::fprintf(stderr,
                         "layover: diff: cannot open --target %s: %s; name the tree to compare the patch with\n",
                         base::display_path(target).c_str(), std::strerror(errno));
            return 2;
        }
        target_fd = base::Fd(fd);
        opts.old_root = target_fd.get();
    }
    // PATHs name files of the tree compared with: --target's when given (an
    // absolute path in the reviewer's copy was refused as outside the target).
    std::string tree = patch->manifest().target;
    if (!target.empty()) {
        char real[PATH_MAX];  // the tree itself, not the words that named it (`--target .`)
        tree = ::realpath(target.c_str(), real) ? std::string(real) : target;
    }
    std::string bad;
    if (!normalize_path_args(tree, raw_paths, &opts.paths, &bad)) {
        std::fprintf(stderr, "layover: diff: %s\n", bad.c_str());
        return 2;
    }
    std::string lister = range->against.empty()
                             ? lister_of(source, patch->from_session())
                             : "layover compare " + base::display_path(first) + " " + base::display_path(source);
    warn_unmatched_paths("diff", tree, lister, opts.paths, patch->manifest().changes);
    // A patch file names the tree it would be applied to: say which, as a
    // header ("layover: diff: target: ..." read as an error).
    if (!patch->from_session())
        std::fprintf(stderr, "layover: diff of patch %s; %s\n", base::display_path(source).c_str(),
                     review::target_line(patch->manifest()).c_str());
    if (!target.empty())
        std::fprintf(stderr, "layover: diff: compared with %s (--target)\n", base::display_path(tree).c_str());
    // The risk lines first, as status lists those changes: in the pager
    // before the first file on a terminal, on stderr otherwise (stdout stays
    // exactly what git apply takes). With --stat, on stderr too, with what
    // git's table cannot show (each one's mode and size, and the set-id or
    // sticky bits of the changes not marked).
    auto ctx = review::risk_context_of_patch(patch.value());
    base::PathFilter scope(opts.paths, {});
    bool stat = opts.format == review::ShowOptions::Format::Stat;
    std::string header = review::risk_lines(
        patch->manifest().changes, ctx, [&](std::string_view p) { return scope.selects(p); }, stat);
    if (tty && opts.format == review::ShowOptions::Format::Patch && !header.empty()) opts.header = header + "\n";
    else std::fputs(header.c_str(), stderr);
    if (mask) opts.filter = [](const std::string& t) { return review::mask_secrets(t); };
    auto r = review::show_diff(patch.value(), opts);
    if (!r) {
        std::fprintf(stderr, "layover: diff %s: %s\n", base::display_path(source).c_str(), r.error().message.c_str());
        return 2;
    }
    return r.value() ? 1 : 0;
}
