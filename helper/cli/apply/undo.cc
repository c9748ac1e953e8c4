// `layover undo`: parse, undo, print.
#include "review/undo/undo.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <set>
#include <string>

#include "capture/patch/reader.h"
#include "helper/base/interrupt.h"
#include "helper/base/text.h"
#include "helper/cli/apply/apply_shared.h"
#include "helper/cli/apply/undo_list.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/store/session/session.h"
#include "review/apply/apply.h"
#include "review/apply/recover_pending.h"

namespace {

const char kUndoUsage[] =
    "usage: layover undo UNDO [--target DIR] [--force] [--dry-run] [--json] [--yes]\n"
    "       layover undo --last [--target DIR] [--force] [--dry-run] [--json]\n"
    "       layover undo --list [--target DIR] [--json]\n"
    "Put back what an apply changed. UNDO is the record apply printed (STATE/undo/DEV-INO/ID, or\n"
    "TARGET/.layover-undo/ID) or an undo patch written by 'apply --undo-to FILE'. --last undoes the\n"
    "newest apply on --target (default: $HOME); --list lists its records. An undo patch needs --yes\n"
    "unless this tree still holds the undo store it was exported from.\n"
    "  --force    put back the originals over paths changed since the apply (those changes are lost)\n"
    "  --dry-run  list what would be put back and the conflicts; change nothing\n";

// `undo --last` on a tree where an apply or undo was killed (docs/security.md,
// "Crash safety"): a killed apply is taken back here (it is the last apply);
// with `apply_only`, a killed undo is left to undo_record, which finishes it
// first and names what it restored. An exit code, or -1 to go on.
int take_back_killed(const std::string& target, bool json_out, bool apply_only) {
    // A Ctrl+C the recovery held: raised when this returns, after what it did was said.
    base::DeferredInterruptTaker interrupted;
    auto state = session::state_dir();
    auto back = state.ok() ? review::recover_pending(*state, target, apply_only)
                           : base::Result<review::Recovered>(state.error());
    if (!back.ok()) {
        std::fprintf(stderr, "layover: undo: %s\n", back.error().message.c_str());
        return 1;
    }
    auto said_interrupted = [&] {
        if (back->interrupted)
            std::fputs("layover: undo: interrupted; the recovery finished first: the target is whole\n", stderr);
    };
    if (!back->took_back) {
        if (!back->note.empty()) std::fprintf(stderr, "layover: undo: %s\n", back->note.c_str());
        said_interrupted();
        return back->interrupted ? 1 : -1;  // held: nothing more is undone
    }
    review::ApplyReport rep;
    rep.recovered = back->note;
    cli::print_notes("undo", rep);
    said_interrupted();
    if (json_out) cli::print_json(&rep, "", false);
    return 0;
}

}  // namespace

int cmd_undo(int argc, char** argv) {
    std::string source;
    review::UndoOptions opts;
    bool json_out = false, last = false, list = false, yes = false;
    for (int i = 1; i < argc; i++) {
        std::string v, arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::fputs(kUndoUsage, stdout);
            return 0;
        }
        if (arg == "--force") opts.force = true;
        else if (arg == "--dry-run" || arg == "-n") opts.dry_run = true;
        else if (arg == "--json") json_out = true;
        else if (arg == "--last") last = true;
        else if (arg == "--list") list = true;
        else if (arg == "--yes" || arg == "-y") yes = true;
        else if (cli::take_value(argc, argv, i, "--target", &v)) opts.target = v;
        else if (!arg.empty() && arg[0] == '-') return cli::unknown_option("undo", arg, kUndoUsage);
        else if (source.empty()) source = arg;
        else return cli::usage_error("undo", "one UNDO record only");
        if (v == "\x01") return cli::usage_error("undo", arg + " needs a value");
    }
    if (last || list) {
        if (!source.empty() || (last && list)) return cli::usage_error("undo", "give one of UNDO, --last or --list");
        auto target = undo_target(opts.target);
        if (!target.ok()) return cli::usage_error("undo", target.error().message);
        if (list) return undo_list(*target, json_out, !opts.target.empty());
        // A killed apply or undo there is the last one: --last takes it back.
        if (int rc = opts.dry_run ? -1 : take_back_killed(*target, json_out, true); rc >= 0) return rc;
        auto rec = newest_record(*target, !opts.target.empty());
        if (!rec.ok()) {
            // A killed undo whose record is gone already: finishing it is all that is left.
            if (int rc = opts.dry_run ? -1 : take_back_killed(*target, json_out, false); rc >= 0) return rc;
            std::fprintf(stderr, "layover: undo: %s\n", rec.error().message.c_str());
            return 1;
        }
        source = *rec;
        opts.target = *target;
    }
    if (source.empty())
        return cli::usage_error("undo", "missing UNDO (the record path 'layover apply' printed), --last or --list");
    auto fail = [&](const std::string& msg) {
        std::fprintf(stderr, "layover: undo: %s\n", msg.c_str());
        if (json_out) cli::print_json(nullptr, msg, opts.dry_run);
        return 1;
    };
    base::Result<review::ApplyReport> rep = base::error("");
    // A Ctrl+C the undo held until the tree was whole: raised when this verb
    // returns, after it said what it restored (helper/base/interrupt.h).
    base::DeferredInterruptTaker interrupted;
    bool from_record = review::is_undo_record(source);
    struct stat st {};
    if (!from_record && ::lstat(source.c_str(), &st) != 0 && errno == ENOENT)
        // Most often a record already undone (undo removes it): not "no patch file".
        return fail("no undo record or undo patch " + base::display_path(source) +
                    " (an undo removes its record); 'layover undo --list' lists the records left");
    if (from_record) {
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
        cli::absolute(&ao.target);
        ao.force = opts.force;
        ao.dry_run = opts.dry_run;
        ao.as_undo = true;
        ao.undo_vouched_only = !yes;
        rep = review::apply_patch(*patch, ao);
    }
    if (!rep.ok()) return fail(rep.error().message);
    cli::print_notes("undo", *rep);
    if (!opts.dry_run && from_record && rep->conflicts.empty())
        unmark_undone(source, rep->undone_source, rep->undone_target);
    if (json_out) {
        cli::print_json(&rep.value(), "", opts.dry_run);
        return rep->conflicts.empty() ? 0 : 1;
    }
    if (!rep->conflicts.empty()) {
        cli::print_conflicts("undo", *rep, "restored", opts.force);
        return 1;
    }
    std::printf("%s %zu path(s)\n", opts.dry_run ? "dry run: would restore" : "restored", rep->applied.size());
    // A path the apply added comes back as nothing: say so, not "restored".
    std::set<std::string> removed(rep->removed.begin(), rep->removed.end());
    for (const auto& p : rep->applied)
        std::printf("  %s%s\n", base::display_path(p).c_str(),
                    !removed.count(p) ? ""
                    : opts.dry_run    ? "  (would be removed: the apply added it)"
                                      : "  (removed: the apply added it)");
    if (!rep->retired.empty())
        std::printf("removed the spent undo record %s\n", base::display_path(rep->retired).c_str());
    if (!rep->undo.empty())
        std::printf("the versions this replaced are kept in %s\n", base::display_path(rep->undo).c_str());
    return 0;
}
