// `layover run`: parse the options, prepare the session, run the sandbox
// under the supervisor, then hand over to the on-exit action.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <optional>

#include "capture/scan/walk/session_scan.h"
#include "helper/base/child.h"
#include "helper/base/text.h"
#include "helper/cli/common/usage.h"
#include "helper/cli/common/verbs.h"
#include "helper/sandbox/prepare/prepare.h"
#include "helper/sandbox/prepare/run_signals.h"
#include "helper/sandbox/supervisor/finish.h"
#include "helper/sandbox/supervisor/supervisor.h"
#include "review/apply/recover_pending.h"

namespace {

// Reap setup once the namespaces are gone (the overlay unmounted): before
// the session is unlocked, as a resume reuses its work dir.
void wait_teardown(PreparedRun& run) {
    if (!run.teardown.valid()) return;
    siginfo_t si;
    while (::waitid(static_cast<idtype_t>(3 /* P_PIDFD */), static_cast<id_t>(run.teardown.get()), &si, WEXITED) < 0 &&
           errno == EINTR) {
    }
    run.teardown.reset();
}

}  // namespace

int cmd_run(int argc, char** argv) {
    // First: from here to run's exit no signal kills run half-way or is
    // lost while the command starts (helper/sandbox/prepare/run_signals.h).
    auto signals = run_signals::Gate::block();
    if (!signals) {
        std::fprintf(stderr, "layover run: %s\n", signals.error().message.c_str());
        return 125;
    }
    base::ensure_std_fds();
    std::vector<std::string> args(argv + 1, argv + argc);
    auto opts = parse_run_args(args);
    if (!opts) return cli::usage_error("run", opts.error().message, 125);
    if (opts->help) {
        std::fputs(kRunUsage, stdout);
        return 0;
    }
    if (opts->ipc_fd >= 0 && ::fcntl(opts->ipc_fd, F_GETFD) < 0) {
        std::fprintf(stderr, "layover run: --ipc-fd %d is not an open file descriptor\n", opts->ipc_fd);
        return 125;
    }
    bool interactive = ::isatty(STDIN_FILENO);
    std::string on_exit = opts->on_exit.empty() ? (interactive ? "prompt" : "keep") : opts->on_exit;

    auto prepared = prepare_run(opts.value());
    if (!prepared) {
        std::fprintf(stderr, "layover: %s\n", prepared.error().message.c_str());
        return 125;
    }
    PreparedRun& run = prepared.value();
    run.signals = std::move(signals.value());
    if (!opts->quiet)
        for (const auto& n : run.notices) std::fprintf(stderr, "layover: %s\n", n.c_str());
    // A killed apply or undo left the tree half done: the command would see it so (attack24).
    // (The state dir is the session dir's grandparent: STATE/sessions/NAME; two stats, no more.)
    if (std::string state = run.session_dir.substr(0, run.session_dir.rfind("/sessions/"));
        !state.empty() && review::journal_pending(state, run.meta.target))
        std::fprintf(stderr,
                     "layover: warning: an apply or undo on %s was interrupted (or is running now), and this run "
                     "sees the tree half done: 'layover undo --last --target %s' takes an interrupted one back\n",
                     base::display_path(run.meta.target).c_str(), base::display_path(run.meta.target).c_str());
    // A shell at a terminal looks like any other: say where it runs and how it ends.
    if (!opts->quiet && opts->command.empty() && interactive) {
        std::string end = on_exit == "prompt" ? "exit it to review the changes"
                                              : "exit it to end the run (--on-exit " + on_exit + ")";
        std::fprintf(stderr,
                     "layover: a shell in session '%s' over %s: what it changes stays in the session "
                     "($LAYOVER_SESSION names it); %s\n",
                     run.meta.name.c_str(), base::display_path(run.meta.target).c_str(), end.c_str());
    }

    // A terminal on stdout or stderr alone gets an output-only pty: what the
    // command prints is filtered on its way there too (helper/sandbox/supervisor/pty_relay.h).
    unsigned pty_fds =
        interactive ? 7 : pty_fds_for_terminals(false, ::isatty(STDOUT_FILENO) == 1, ::isatty(STDERR_FILENO) == 1);
    std::optional<PtyRelay> pty;
    if (pty_fds != 0) {
        auto p = PtyRelay::open(pty_fds);
        if (!p) {
            std::fprintf(stderr, "layover: %s\n", p.error().message.c_str());
            finish_failed_run(run);
            return 125;
        }
        pty.emplace(std::move(p.value()));
        run.plan.pty_slave = pty->slave();
        run.plan.pty_fds = pty_fds;
    }

    // The status at once [sync 6]; the namespaces' teardown (the overlay's
    // unmount, ~0.1 s after 6,000 files) runs meanwhile: a discard never
    // waits for it, the other modes only before the session is unlocked.
    run.exit_early = !interactive && run.plan.limits.memory_cgroup.empty();
    run.discarding = on_exit == "discard";
    run.meta.on_exit = on_exit;  // a crashed discarding run is named by `sessions` (session::crashed_discard_note)
    run.plan.pass_mnt_ns = run.discarding;
    run.keep_empty = opts->keep_empty;
    run.quiet = opts->quiet;
    Outcome out = supervise(run, pty);
    pty.reset();
    if (out.cancelled) {
        // Before the new session's dir: nothing was made, nothing is left.
        finish_failed_run(run);
        if (!opts->quiet)
            std::fprintf(stderr, "layover: %s before the command started; no session was made\n",
                         run_signals::name(out.cancelled));
        return 128 + out.cancelled;
    }
    // The count `sessions` shows, and whether the session is empty (then
    // removed); a discarded session needs neither.
    // The upper layer's final syncfs (it was mounted volatile) runs on the
    // flush's thread meanwhile: one waits on the disk, the other walks
    // cached metadata. finish_run waits for it.
    auto count_changes = [&run] {
        session::Info info;
        info.meta = run.meta;
        info.dir = run.session_dir;
        run.flush.finish();
        auto n = capture::count_changes_in_child(info, true);
        run.meta.changes = n.ok() ? n.value() : -1;
        wait_teardown(run);
    };
    if (!out.stopped.empty()) {
        // A limit stopped it: keep the session whatever --on-exit said (finish_run names it),
        // counted as any other; one that changed nothing is removed as any other (--keep-empty keeps it).
        count_changes();
        bool empty = empty_at_exit(run) && !run.keep_empty;
        std::string skipped =
            on_exit == "keep" || empty ? "" : "; --on-exit " + on_exit + " skipped: a stopped session is kept";
        std::fprintf(stderr, "layover: %s%s\n", out.stopped.c_str(), skipped.c_str());
        run.meta.stopped = out.stopped;
        int rc = finish_run(run, "keep", out.stop_code);
        return rc == out.stop_code ? out.stop_code : 125;
    }
    if (!out.setup_error.empty()) {
        std::fprintf(stderr, "layover: %s\n", out.setup_error.c_str());
        finish_failed_run(run);
        return 125;
    }
    if (on_exit != "discard") count_changes();
    return finish_run(run, on_exit, out.exit_code);
}
