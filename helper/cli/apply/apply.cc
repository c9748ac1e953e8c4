// `layover apply`: parse, confirm, print (`undo`: undo.cc).
#include "review/apply/apply.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "capture/patch/kept_data.h"
#include "capture/patch/known_bases.h"
#include "capture/patch/reader.h"
#include "capture/scan/walk/session_scan.h"
#include "helper/base/fd.h"
#include "helper/base/glob.h"
#include "helper/base/interrupt.h"
#include "helper/base/json/bytes.h"
#include "helper/base/text.h"
#include "helper/cli/apply/apply_args.h"
#include "helper/cli/apply/apply_rejected.h"
#include "helper/cli/apply/apply_shared.h"
#include "helper/cli/apply/apply_walk.h"
#include "helper/cli/apply/undo_list.h"
#include "helper/cli/common/path_args.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/store/session/session.h"
#include "review/apply/partial.h"
#include "review/apply/target.h"
#include "review/prompt/io.h"
#include "review/prompt/listing.h"
#include "review/prompt/risk_patch.h"
#include "review/prompt/risk_scan.h"
#include "review/undo/undo.h"

namespace {

using cli::absolute;
using cli::print_conflicts;
using cli::print_json;
using cli::print_notes;
using cli::take_value;
using json = nlohmann::json;

// " (hunks 1,3 of 5)" for a file applied in part.
std::string hunks_note(const review::ApplyReport& rep, const std::string& path) {
    for (const auto& m : rep.marked)
        if (m == path) return " (merged, with conflict markers)";
    bool merged = std::find(rep.merged.begin(), rep.merged.end(), path) != rep.merged.end();
    for (const auto& p : rep.partial) {
        if (p.path != path) continue;
        std::string nums;
        for (size_t n : p.hunks) nums += (nums.empty() ? "" : ",") + std::to_string(n);
        return " (hunk" + std::string(p.hunks.size() == 1 ? " " : "s ") + nums + " of " + std::to_string(p.of) +
               (merged ? " of the merge with changes made since)" : ")");
    }
    return merged ? " (merged with changes made since)" : "";
}

// At most 200 paths, each with its change's letter (A, M, D, ...). root:
// the target once applied; a file merged or applied in part then shows the
// size written, not the patch's.
void print_list(const review::ApplyReport& rep, const capture::Manifest& man, const char* lead,
                const review::RiskContext& ctx, int root = -1) {
    constexpr size_t kShown = 200;
    std::unordered_map<std::string_view, const capture::Change*> changes;
    size_t n = std::min(rep.applied.size(), kShown);
    for (size_t i = 0; i < n; i++) changes.emplace(rep.applied[i], nullptr);
    for (const auto& c : man.changes)
        if (auto l = changes.find(c.path); l != changes.end()) l->second = &c;
    for (size_t i = 0; i < n; i++) {
        const capture::Change* c = changes[rep.applied[i]];
        std::string note = hunks_note(rep, rep.applied[i]);
        std::optional<capture::Change> written;
        struct stat st;
        if (c && !note.empty() && root >= 0 && ::fstatat(root, c->path.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0)
            written = *c, written->size = static_cast<uint64_t>(st.st_size);
        std::printf("%s%c %s%s%s\n", lead, c ? capture::kind_letter(c->kind) : ' ',
                    (c ? review::shown_path(*c) : base::display_path(rep.applied[i])).c_str(), note.c_str(),
                    c ? review::change_details(written ? *written : *c, ctx).c_str() : "");
    }
    if (rep.applied.size() > kShown) std::printf("  ... and %zu more\n", rep.applied.size() - kShown);
}

// --hunks/--exclude-hunks PATH:N[,M...]: PATH relative to the target (or absolute beneath it).
bool hunk_choices(const std::string& target, const std::vector<std::pair<std::string, bool>>& args,
                  review::HunkChoices* out, std::string* error) {
    for (const auto& [arg, exclude] : args) {
        auto pick = cli::hunk_pick(arg, exclude, error);
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

// The session a patch was read from, if it is one (and still there).
std::optional<session::Info> session_of(const capture::Patch& patch) {
    if (!patch.from_session()) return std::nullopt;
    auto state = session::state_dir();
    if (!state.ok()) return std::nullopt;
    auto info = session::find(*state, patch.manifest().session);
    if (!info.ok()) return std::nullopt;
    return std::move(info.value());
}

// A session's file applied in part: its real content before and after are
// layover's own doing, not a change the session's copy went stale against.
void record_partial(const capture::Patch& patch, const review::ApplyReport& rep) {
    if (rep.partial.empty()) return;
    if (auto info = session_of(patch))
        for (const auto& w : review::remember_partial(info->dir, rep.partial))
            std::fprintf(stderr, "layover: apply: %s\n", w.c_str());
}

// An apply of a session that failed and rolled back: the originals it moved
// aside are back, renamed, with a new ctime; they are still the bases the
// sandbox copied, so a retry is no stale-copy conflict (a real edit since,
// another content, still is). Best effort.
void remember_rolled_back(const capture::Patch& patch) {
    if (auto info = session_of(patch)) (void)capture::remember_bases(info->dir, patch.manifest());
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

// A Ctrl+C at the question is a "no", said as one: it killed the verb with
// no word, which left the user to wonder what had been applied.
bool confirm(const std::string& question) {
    review::InterruptGuard guard;
    std::string line;
    if (review::ask(question + " [y/N] ", &line) != review::Input::Line) {
        review::end_line();
        return false;
    }
    return line == "y" || line == "Y" || line == "yes" || line == "YES";
}

// A session applied: its fresh base records are kept (capture/patch/
// known_bases.h: an `undo` then another apply is no stale-copy conflict), and
// when the whole session was applied (no --only/--exclude/--hunks) its state becomes
// "applied".
void mark_session_applied(const capture::Patch& patch, const review::ApplyOptions& o, const std::string& undo) {
    auto info = session_of(patch);
    if (!info) return;
    if (auto k = capture::remember_bases(info->dir, patch.manifest()); !k.ok())
        std::fprintf(stderr, "layover: apply: applied, but %s\n", k.error().message.c_str());
    if (!o.only.empty() || !o.exclude.empty() || !o.hunks.empty()) {
        // What is left is what `sessions` counts now (the applied paths equal
        // the real tree, so they are no longer changes).
        capture::recount_changes(*info);
        return;
    }
    if (auto m = session::mark_applied(info->dir, undo); !m.ok())
        std::fprintf(stderr, "layover: apply: applied, but %s\n", m.error().message.c_str());
}

// The tree an apply wrote, symlink-free, as the undo records name it.
std::string real_path(const std::string& path) {
    char buf[PATH_MAX];
    return ::realpath(path.c_str(), buf) ? std::string(buf) : path;
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

// A patch file's conflicts: said when it was applied to the target already.
void applied_twice(const capture::Patch& patch, const std::string& target) {
    if (patch.from_session()) return;
    if (std::string note = applied_before_note(real_path(target), patch.file()); !note.empty())
        std::fprintf(stderr, "%s\n", note.c_str());
}

}  // namespace

int cmd_apply(int argc, char** argv) {
    cli::ApplyArgs a;
    if (std::optional<int> done = cli::parse_apply_args(argc, argv, &a)) return *done;
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
    // A usage mistake exits 2, as diff's does (it exited 1 here).
    if (std::string why = cli::step_flag_on_patch(a.source, a.steps, "--upto takes"); !why.empty())
        return cli::usage_error("apply", why);
    auto range = cli::steps_of_source(a.source, a.steps, "--upto takes");
    if (!range.ok()) return fail(range.error().message);
    capture::Limits limits;
    limits.keep_decoded = capture::KeptData::kApplyBudget;  // staging writes what validation decoded
    auto patch = capture::Patch::open_source(a.source, limits, a.ignore, *range);
    if (!patch.ok()) return fail(patch.error().message);
    std::string target = a.opts.target.empty() ? patch->manifest().target : a.opts.target;
    // PATH... narrows as --only does (both given: either selects).
    std::string bad;
    if (!normalize_path_args(target, a.paths, &a.opts.only, &bad)) return cli::usage_error("apply", bad);
    if (!hunk_choices(target, a.hunk_args, &a.opts.hunks, &bad)) return cli::usage_error("apply", bad);
    warn_unmatched_paths("apply", target, lister_of(a.source, patch->from_session()), a.opts.only,
                         patch->manifest().changes);
    // No terminal and no --yes: what needs no answer (the target) is checked
    // first, so that one refusal names every fix.
    if (unconfirmed) {
        if (auto t = review::open_target(a.opts.target, *patch); !t.ok())
            return cli::usage_error("apply", t.error().message + "; and pass --yes: there is no terminal to ask on");
        return cli::usage_error(
            "apply",
            "refusing to change the real tree without confirmation: there is no terminal to ask on; "
            "pass --yes (or preview with --dry-run)");
    }
    cli::KeptAnswers kept;  // -p: kept for another try unless this apply happens
    if (a.walk) {           // the answers become the selection; rejections are asked again
        switch (cli::walk_answers(*patch, target, &a.opts, &kept)) {
            case cli::Walked::Chosen: break;
            case cli::Walked::Nothing: return 0;
            case cli::Walked::Failed: return 1;
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
    bool previewed = !a.yes && !a.opts.dry_run && !a.walk;
    if (previewed) {
        review::ApplyOptions preview = a.opts;
        preview.dry_run = true;
        auto pre = review::apply_patch(*patch, preview);
        if (!pre.ok()) return fail(pre.error().message);
        print_notes("apply", *pre);
        if (!pre->conflicts.empty()) {
            print_conflicts("apply", *pre, "applied", a.opts.force);
            cli::note_markers_unmergeable(*pre, a.opts.conflict_markers);
            applied_twice(*patch, target);
            return 1;
        }
        if (pre->applied.empty()) {
            std::printf("nothing to apply to %s\n", base::display_path(target).c_str());
            return 0;
        }
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
        // Worded as the exit prompt's question ("1 change", "2 changes").
        size_t n = pre->applied.size();
        if (!confirm("Apply " + std::to_string(n) + (n == 1 ? " change" : " changes") + " to " +
                     base::display_path(target) + "?")) {
            std::fputs("layover: apply: cancelled; nothing was applied\n", stderr);
            return 1;
        }
    }
    a.opts.progress = ::isatty(2) && !a.json_out;
    // A Ctrl+C the apply held until the tree was whole again: raised when this
    // verb returns, after it said what was applied (helper/base/interrupt.h).
    base::DeferredInterruptTaker interrupted;
    // The bases it saw, remembered before the commit: killed, then recovered
    // (the originals renamed back), the next apply is no stale-copy conflict.
    if (!a.opts.dry_run)
        if (auto info = session_of(*patch)) (void)capture::remember_bases(info->dir, patch->manifest());
    auto rep = review::apply_patch(*patch, a.opts);
    if (rep.ok() && previewed) rep->already.clear();  // said before the question
    if (refused) return refuse_secrets(secrets, a.json_out, rep.ok() ? "" : rep.error().message);
    if (!rep.ok()) {
        if (!a.opts.dry_run) remember_rolled_back(*patch);
        return fail(rep.error().message);
    }
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
        print_conflicts("apply", *rep, a.opts.dry_run ? "changed (dry run)" : "applied", a.opts.force);
        cli::note_markers_unmergeable(*rep, a.opts.conflict_markers);
        applied_twice(*patch, target);
        return 1;
    }
    if (rep->applied.empty()) {
        if (!a.opts.dry_run) kept.applied();
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
    kept.applied();
    std::printf("applied %zu change(s) to %s:\n", rep->applied.size(), base::display_path(target).c_str());
    mark_session_applied(*patch, a.opts, rep->undo);
    base::Fd root(::open(target.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    print_list(*rep, patch->manifest(), "  ", ctx, root.get());
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
