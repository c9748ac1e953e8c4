#include "helper/sandbox/supervisor/finish.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "helper/base/child.h"
#include "helper/base/clock.h"
#include "helper/sandbox/policy/scratch.h"
#include "helper/sandbox/prepare/discard.h"
#include "helper/store/layers/steps.h"
#include "helper/store/session/remove.h"

namespace {

// The overlay was mounted with `volatile`, so its writes were never synced:
// make them durable once, now, before anyone relies on the kept session
// (when the flush's thread did not: helper/sandbox/prepare/upper_flush.h). Through
// the session dir, which is ours: the command may chmod the upper's root.
// Returns the errno of a failed syncfs, 0 otherwise.
int sync_upper(const std::string& dir) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    int e = ::syncfs(fd) == 0 ? 0 : errno;
    ::close(fd);
    return e;
}

std::string patch_tool() {
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return "layover-patch";
    self[n] = '\0';
    std::string dir(self);
    dir.resize(dir.rfind('/'));
    std::string cand = dir + "/layover-patch";
    if (::access(cand.c_str(), X_OK) == 0) return cand;
    return dir + "/../lib/layover/layover-patch";
}

int run_patch_tool(const std::string& mode, const std::string& name, run_signals::Gate& signals) {
    std::string tool = patch_tool();
    // As system() does: Ctrl+C at the prompt belongs to the prompt, which
    // keeps the session; it must not kill run and lose its exit status.
    // The rest of run's signals are unblocked meanwhile (the session is
    // finished: SIGTERM ends run as it would any program), and what came
    // since the command ended is dropped first.
    struct sigaction ign = {}, old_int, old_quit;
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGINT, &ign, &old_int);
    ::sigaction(SIGQUIT, &ign, &old_quit);
    signals.drain();
    sigset_t blocked;
    ::sigprocmask(SIG_SETMASK, &signals.original(), &blocked);
    auto child = base::spawn([&]() -> int {
        ::sigaction(SIGINT, &old_int, nullptr);
        ::sigaction(SIGQUIT, &old_quit, nullptr);
        ::execl(tool.c_str(), "on-exit", mode.c_str(), name.c_str(), (char*)nullptr);
        std::fprintf(stderr, "layover: cannot run %s; reinstall layover\n", tool.c_str());
        return 125;
    });
    int rc = 125;
    if (child) {
        auto st = child->wait();
        if (st) rc = base::exit_code_of(st.value());
    }
    ::sigprocmask(SIG_SETMASK, &blocked, nullptr);
    ::sigaction(SIGINT, &old_int, nullptr);
    ::sigaction(SIGQUIT, &old_quit, nullptr);
    return rc;
}

}  // namespace

bool empty_at_exit(const PreparedRun& run) { return run.meta.changes == 0 && !session::holds_history(run.session_dir); }

void finish_failed_run(PreparedRun& run) {
    run.flush.stop();
    if (run.created) {
        run.lock.reset();
        if (!run.dirs_pending) (void)remove_tree_fast(run.session_dir);  // never one we did not make
        return;
    }
    run.meta.status = "exited";
    (void)session::write_meta(run.session_dir, run.meta);
}

int finish_run(PreparedRun& run, const std::string& on_exit, int child_code) {
    const std::string& name = run.meta.name;
    const std::string& state = run.plan.mounts.state_dir;
    if (on_exit == "discard") {
        // No exit record, no sync, no count: the session goes, in the
        // background (helper/sandbox/prepare/discard.h).
        // The remover also purges what a killed one left in STATE/deleting/.
        auto r = remove_in_background(state, run.session_dir, std::move(run.lock), std::move(run.teardown),
                                      &run.remover, std::move(run.child_mnt));
        if (!r) {
            std::fprintf(stderr, "layover: discarding session '%s': %s\n", name.c_str(), r.error().message.c_str());
            return 125;
        }
        return child_code;
    }
    int synced = run.flush.wait() ? run.flush.error() : sync_upper(run.session_dir);
    if (synced != 0)
        std::fprintf(stderr,
                     "layover: warning: writing session '%s' to disk failed: %s; its changes may not survive a "
                     "crash: check the disk (df, dmesg), then keep a copy with 'layover save %s -o FILE'\n",
                     name.c_str(), std::strerror(synced), name.c_str());
    run.meta.status = "exited";
    run.meta.exit_code = child_code;
    run.meta.pid = 0;
    // When the step a resume freezes from this run ended (`log`).
    steps::mark_live_ended(run.session_dir, base::utc_now_rfc3339());
    if (auto w = session::write_meta(run.session_dir, run.meta); !w) {
        std::fprintf(stderr, "layover: %s (the session's changes are intact in %s)\n", w.error().message.c_str(),
                     run.session_dir.c_str());
        return 125;
    }
    // Writes outside the target are never applied: say so, once, in any mode.
    bool wrote_outside = false;
    if (on_exit != "discard") {
        const char* home = std::getenv("HOME");
        // A resumed session's layers hold its earlier runs' writes too: said apart.
        auto outside = scratch::summarize(run.session_dir, run.meta.outside, home ? home : "",
                                          run.created ? 0 : run.started_coarse_ns);
        wrote_outside = outside && outside->files;
        if (wrote_outside) std::fprintf(stderr, "layover: %s\n", scratch::summary_line(*outside).c_str());
    }
    purge_old_trash(state);
    purge_deleting(state);

    // Nothing changed: nothing to keep, review or apply (save:FILE still writes its file).
    bool no_save = on_exit == "keep" || on_exit == "prompt" || on_exit == "apply";
    // No change against the real tree (nothing to review or apply), but
    // steps to trace, roll back to or bring back: kept under keep, prompt
    // and apply (asked only then: a discard, as the start-up row's, reads no
    // steps).
    if (no_save && run.meta.changes == 0 && session::holds_history(run.session_dir)) {
        run.lock.reset();
        auto counted = steps::count(run.session_dir);
        int steps = counted.ok() ? counted.value() : 0;
        if (steps > 0)
            std::fprintf(stderr,
                         "layover: session '%s' kept: no changes against the real tree, but %d step(s) of history: "
                         "'layover log %s' lists them\n",
                         name.c_str(), steps, name.c_str());
        else
            std::fprintf(stderr,
                         "layover: session '%s' kept: no changes against the real tree, but the steps a rollback "
                         "set aside: 'layover rollback %s --undo' brings them back\n",
                         name.c_str(), name.c_str());
        return child_code;
    }
    // Scratch writes outside the target are kept for a resume: not empty.
    if (run.meta.changes == 0 && no_save && !wrote_outside) {
        if (run.keep_empty) {
            run.lock.reset();
            if (!run.quiet)
                std::fprintf(stderr, "layover: session '%s' made no changes; kept (--keep-empty)\n", name.c_str());
            return child_code;
        }
        auto r = remove_in_background(state, run.session_dir, std::move(run.lock));
        if (!r) {
            std::fprintf(stderr, "layover: removing the empty session '%s': %s\n", name.c_str(),
                         r.error().message.c_str());
            return child_code;
        }
        if (!run.quiet)
            std::fprintf(stderr, "layover: session '%s' made no changes; removed (--keep-empty keeps it)\n",
                         name.c_str());
        return child_code;
    }
    // Release the lock before handing over: apply refuses locked (running) sessions.
    run.lock.reset();
    if (on_exit == "keep") {
        std::fprintf(stderr,
                     "layover: session '%s' kept: 'layover status %s' lists its changes, 'layover apply %s' "
                     "applies them, 'layover discard %s' drops them\n",
                     name.c_str(), name.c_str(), name.c_str(), name.c_str());
        return child_code;
    }
    int rc = run_patch_tool(on_exit, name, run.signals);
    return rc == 0 ? child_code : 125;
}

void purge_old_trash(const std::string& state) {
    auto items = session::list(state, true);
    if (!items) return;
    time_t now = ::time(nullptr);
    for (const auto& it : items.value()) {
        struct stat st;
        // The trash entry's ctime is when it was moved there.
        if (::stat(it.dir.c_str(), &st) == 0 && now - st.st_ctime > 24 * 3600) (void)remove_tree_fast(it.dir);
    }
}
