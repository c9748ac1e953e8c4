// `layover revert SESSION N`: take back step N alone, keeping the later
// steps (docs/history.md). A new step holds N's inverse: built in
// SESSION/revert.new as the owner, then its record and layer renamed into
// steps/ (the layer's rename is the commit), so the session is never half
// reverted and no frozen layer changes.
#include "helper/store/history/revert.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "helper/base/clock.h"
#include "helper/base/text.h"
#include "helper/cli/common/step_args.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/sandbox/ipc/control.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/session/session.h"
#include "review/txn/fault.h"

namespace {

constexpr const char* kRevertUsage =
    "usage: layover revert SESSION N   take back step N alone, keeping the later steps";

int fail(const std::string& msg) {
    std::fprintf(stderr, "layover: %s\n", msg.c_str());
    return 1;
}

std::string by_text(int by) { return by == 0 ? "the live changes" : "step " + std::to_string(by); }

bool exists(const std::string& p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
}

// "C" + one line per clash (path in base64, then the steps), "E" when step N
// changed nothing still visible, "B" when the inverse is built.
base::Result<std::string> build(const session::Info& s, int n, int total, const std::string& label,
                                const std::string& work) {
    return capture::in_owner_ns([&]() -> base::Result<std::string> {
        TRY(auto clashes, steps::revert_clashes(s.dir, n, s.meta.target));
        if (!clashes.empty()) {
            std::string out = "C";
            for (const auto& c : clashes) {
                out += base::base64_encode(c.path);
                for (int by : c.by) out += " " + std::to_string(by);
                out += "\n";
            }
            return out;
        }
        if (::mkdir(work.c_str(), 0700) != 0) return base::sys_error("creating " + work);
        std::string layer = work + "/layer";
        TRY(auto mine, steps::build_inverse(s.dir, n, s.meta.target, layer));
        if (mine.empty()) return std::string("E");
        steps::Record r;
        r.n = total + 1;
        r.label = label;
        r.start = r.end = base::utc_now_rfc3339();
        TRY(r.paths, steps::touched_layer(layer, s.dir, total, s.meta.target));
        TRY(base::Fd f, base::open_at(AT_FDCWD, work + "/record.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600));
        std::string text = steps::record_to_text(r);
        TRY_VOID(base::write_all(f.get(), text.data(), text.size()));
        TRY_VOID(f.close());
        return std::string("B");
    });
}

base::Result<void> move(const std::string& from, const std::string& to) {
    if (::rename(from.c_str(), to.c_str()) != 0) return base::sys_error("moving " + from + " to " + to);
    return base::Ok();
}

bool supervised(int64_t supervisor) {
    const char* by = std::getenv("LAYOVER_REVERT_FOR");
    return by && supervisor > 0 && std::to_string(supervisor) == by && ::getppid() == supervisor;
}

int revert_running(const session::Info& s, int n) {
    auto r = control::ask(s.dir, {"revert", "", n});
    if (!r) return fail("revert of session '" + s.meta.name + "': " + r.error().message);
    if (r->step == 0)
        std::fprintf(stderr,
                     "layover: session '%s': step %d changed nothing that is still there, or is already "
                     "reverted; nothing to revert\n",
                     s.meta.name.c_str(), n);
    else
        std::fprintf(stderr, "layover: session '%s': step %d reverted by a new step %d; later steps kept\n",
                     s.meta.name.c_str(), n, r->step);
    return 0;
}

}  // namespace

int cmd_revert(int argc, char** argv) {
    std::vector<std::string> pos;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "-h" || a == "--help") {
            std::puts(kRevertUsage);
            std::puts("  A new step 'revert N: LABEL' holds N's inverse; refused (exit 1) when a later step or the");
            std::puts("  live changes touched one of N's paths, each such path listed with the steps that did.");
            return 0;
        }
        if (!a.empty() && a[0] == '-') {
            return cli::unknown_option("revert", a, kRevertUsage);
        }
        pos.push_back(a);
    }
    if (pos.size() != 2) return cli::usage_error("revert", "takes a SESSION and a step number N");
    const std::string& v = pos[1];
    if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos)
        return cli::usage_error("revert", "N must be a step number (see 'layover log')");
    int n = std::atoi(v.c_str());
    auto state = session::state_dir();
    if (!state) return fail(state.error().message);
    auto s = session::find(state.value(), pos[0]);
    if (!s) return fail(s.error().message);
    const std::string& name = s->meta.name;
    // A running session: its supervisor runs this very command as its child
    // under the freeze rule, holding the lock (helper/sandbox/live/live_history.cc).
    bool for_supervisor = s->state == "running" && supervised(s->meta.pid);
    if (s->state == "running" && !for_supervisor) return revert_running(s.value(), n);
    auto lk = for_supervisor ? base::Fd() : session::lock(s->dir, name);
    if (!lk) return fail(lk.error().message);
    auto recs = steps::read_all(s->dir);
    if (!recs) return fail("session '" + name + "': " + recs.error().message);
    int total = static_cast<int>(recs->size());
    if (n < 1 || n > total)
        return fail("session '" + name + "' has no step " + v +
                    (total ? " (it has steps 1.." + std::to_string(total) + ")" : " (it has no frozen steps)") +
                    "; see 'layover log " + name + "'");
    const steps::Record& rec = (*recs)[static_cast<size_t>(n - 1)];
    if (rec.squashed)
        return fail("step " + v + " of session '" + name +
                    "' is out of reach: it was squashed into a later step (see 'layover log " + name + "')");
    // Left by an earlier revert that died: never part of the session's view.
    std::string work = s->dir + "/revert.new", orphan = steps::record_file(s->dir, total + 1);
    steps::remove_flat(work);
    if (exists(orphan) && !exists(steps::layer_dir(s->dir, total + 1))) ::unlink(orphan.c_str());
    std::string prefix = "revert " + v + ": ";
    std::string label = prefix + rec.label;
    if (label.size() > 200) label.resize(200);
    auto built = build(s.value(), n, total, label, work);
    if (!built) {
        steps::remove_flat(work);
        return fail("reverting step " + v + " of session '" + name + "': " + built.error().message);
    }
    const std::string& got = built.value();
    if (got == "E") {
        steps::remove_flat(work);
        std::fprintf(stderr, "layover: session '%s': step %d changed nothing that is still there; nothing to revert\n",
                     name.c_str(), n);
        return 0;
    }
    if (!got.empty() && got[0] == 'C') {
        steps::remove_flat(work);
        // Every clash with an earlier revert of this very step: done already.
        int by_revert = 0;
        bool only_reverts = true;
        std::string lines;
        for (size_t a = 1; a < got.size();) {
            size_t e = got.find('\n', a);
            std::string line = got.substr(a, e - a), path;
            a = e + 1;
            size_t sp = line.find(' ');
            base::base64_decode(line.substr(0, sp), &path);
            std::string who;
            for (size_t b = sp; b != std::string::npos && b < line.size();) {
                size_t c = line.find(' ', b + 1);
                int by = std::atoi(line.substr(b + 1, c - b - 1).c_str());
                b = c;
                who += (who.empty() ? "" : ", ") + by_text(by);
                bool revert = by > 0 && (*recs)[static_cast<size_t>(by - 1)].label.rfind(prefix, 0) == 0;
                if (revert) by_revert = by;
                else only_reverts = false;
            }
            lines += "  " + base::display_path(path) + ": " + who + "\n";
        }
        if (only_reverts && by_revert) {
            std::fprintf(stderr, "layover: session '%s': step %d is already reverted (step %d)\n", name.c_str(), n,
                         by_revert);
            return 0;
        }
        std::fprintf(stderr,
                     "layover: cannot revert step %d of session '%s': later changes touched its paths; nothing "
                     "was changed:\n%s",
                     n, name.c_str(), lines.c_str());
        std::fprintf(stderr, "fix: roll back to before those steps ('layover rollback %s N'), or keep step %d\n",
                     name.c_str(), n);
        return 1;
    }
    session::Meta m = s->meta;
    auto commit = [&]() -> base::Result<void> {
        TRY_VOID(review::fault_point("revert", "built"));
        // What the exit's scan, an apply or a save recorded no longer describes the view.
        m.changes = -1;
        m.applied.clear();
        m.undo.clear();
        m.saved.clear();
        TRY_VOID(session::write_meta(s->dir, m));
        TRY_VOID(move(work + "/record.json", orphan));
        TRY_VOID(review::fault_point("revert", "record"));
        TRY_VOID(move(work + "/layer", steps::layer_dir(s->dir, total + 1)));  // the commit
        TRY_VOID(review::fault_point("revert", "committed"));
        return base::Ok();
    };
    auto r = commit();
    steps::remove_flat(work);
    if (!r) {
        if (!exists(steps::layer_dir(s->dir, total + 1))) ::unlink(orphan.c_str());
        return fail("reverting step " + v + " of session '" + name + "': " + r.error().message +
                    "; nothing was changed");
    }
    std::fprintf(stderr, "layover: session '%s': step %d reverted by a new step %d ('%s'); later steps kept\n",
                 name.c_str(), n, total + 1, base::display_path(label).c_str());
    // Past the depth limit the oldest two layers become one, as after a
    // checkpoint (after the commit: step n may be the oldest layer). A kill
    // here leaves one layer too many, which the next freeze squashes. Not for
    // a running session: its layers are mounted, and a squash would remove
    // files under them (squashed when it is kept, as a checkpoint's are).
    if (for_supervisor) return 0;
    auto squashed = capture::in_owner_ns([&]() -> base::Result<std::string> {
        TRY_VOID(steps::squash_past(s->dir, s->meta.target, total + 1, steps::kMaxDepth));
        return std::string();
    });
    if (!squashed)
        std::fprintf(stderr,
                     "layover: session '%s': squashing its oldest steps past the depth limit: %s (the next "
                     "step retries)\n",
                     name.c_str(), squashed.error().message.c_str());
    cli::recount_view(s.value(), m);
    return 0;
}
