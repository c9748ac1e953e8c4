// Rollback, undo, revert and fork of a running session, served by its
// supervisor (helper/sandbox/live/live_checkpoint.h; docs/history.md, "A running
// session"): the same operations as on a kept session, under the freeze rule.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/base/self_exe.h"
#include "helper/sandbox/live/live_checkpoint.h"
#include "helper/sandbox/prepare/prepare.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/session/session.h"

extern char** environ;

namespace {

control::Reply refuse(const std::string& msg) { return {false, 0, msg}; }

// `layover revert NAME N` as a child (the kept session's code, whole): it
// knows it is this supervisor's by LAYOVER_REVERT_FOR (helper/cli/history/revert.cc).
// Its exit code and what it printed on stderr.
base::Result<std::pair<int, std::string>> run_revert(const std::string& name, int n) {
    std::string exe = base::self_exe();
    if (exe.empty()) return base::error("finding layover's own binary (is /proc mounted?)");
    std::vector<std::string> args = {exe, "revert", name, std::to_string(n)};
    std::vector<std::string> env = {"LAYOVER_REVERT_FOR=" + std::to_string(::getpid())};
    for (char** e = environ; *e; e++)
        if (std::string(*e).rfind("LAYOVER_REVERT_FOR=", 0) != 0) env.push_back(*e);
    std::vector<char*> argv, envp;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) return base::sys_error("pipe");
    base::Fd rd(p[0]), wr(p[1]);
    pid_t pid = ::fork();
    if (pid < 0) return base::sys_error("fork");
    if (pid == 0) {
        sigset_t none;  // the supervisor blocks the signals its signalfd reads
        ::sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        ::dup2(wr.get(), STDERR_FILENO);
        int null = ::open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null >= 0) {
            ::dup2(null, STDIN_FILENO);
            ::dup2(null, STDOUT_FILENO);
        }
        ::execve(exe.c_str(), argv.data(), envp.data());
        ::_exit(127);
    }
    wr.reset();
    std::string out;
    char buf[4096];
    ssize_t got;
    while ((got = ::read(rd.get(), buf, sizeof buf)) != 0) {
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) break;
        if (out.size() < 16384) out.append(buf, static_cast<size_t>(got));
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) return base::sys_error("waiting for the revert");
    while (!out.empty() && out.back() == '\n') out.pop_back();
    const std::string prefix = "layover: ";
    if (out.rfind(prefix, 0) == 0) out = out.substr(prefix.size());
    if (WIFSIGNALED(status)) out += (out.empty() ? "" : "; ") + std::string("the revert was killed");
    return std::make_pair(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out);
}

}  // namespace

control::Reply LiveCheckpoint::rollback(const control::Request& req, pid_t init) {
    const std::string& d = run_.session_dir;
    bool undo = req.op == "undo";
    std::string verb = undo ? "rollback --undo" : "rollback";
    std::string refused = hold(init, verb);
    if (!refused.empty()) return refuse(refused);
    Stack held = stack();
    auto r = capture::in_owner_ns([&]() -> base::Result<std::string> {
        TRY(int moved, undo ? steps::rollback_undo(d) : steps::rollback(d, req.step, run_.plan.mounts.target));
        return std::to_string(moved);
    });
    if (!r) return settle(held, r.error().message);
    int moved = std::atoi(r->c_str());
    if (stack() == held) {  // already the view asked for: nothing to mount
        auto rw = release("");
        if (!rw.error.empty()) return refuse("remounting the overlay read-write" + rw.error);
        return {true, req.step, "", 0};
    }
    auto n = steps::count(d);
    return mount_changed(held, {true, n ? n.value() : 0, "", moved});
}

control::Reply LiveCheckpoint::revert(const control::Request& req, pid_t init) {
    std::string refused = hold(init, "revert");
    if (!refused.empty()) return refuse(refused);
    Stack held = stack();
    auto r = run_revert(run_.meta.name, req.step);
    if (!r) return settle(held, r.error().message);
    auto [code, said] = r.value();
    bool said_so = said.find("nothing was changed") != std::string::npos;  // a clash lists its paths first
    if (code != 0) return said_so && stack() == held ? release(said) : settle(held, said);
    if (stack() == held) {  // nothing to revert, or reverted already: said so
        auto rw = release(said);
        return rw.error == said ? control::Reply{true, 0, "", 0} : rw;
    }
    return mount_changed(held, {true, stack().count, "", 0});
}

control::Reply LiveCheckpoint::mount_changed(const Stack& held, const control::Reply& done) {
    auto f = base::fault_point("live", "changed");
    if (!f) return refuse(f.error().message);
    auto m = mount_disk(held);
    if (!m)
        return refuse("mounting the session's new layers: " + m.error().message +
                      "; its view stays read-only: stop the session and resume it");
    return done;
}

control::Reply LiveCheckpoint::fork(const control::Request& req, pid_t init) {
    const std::string& d = run_.session_dir;
    if (req.step < 0) {  // all of it: the live changes become a step first
        auto c = checkpoint("", init, "fork");
        if (!c.ok) return c;
    }
    auto state = session::state_dir();
    if (!state) return refuse(state.error().message);
    std::string tmp = session::sessions_dir(state.value()) + "/.fork-" + req.name + "." + std::to_string(req.peer);
    auto r = capture::in_owner_ns([&]() -> base::Result<std::string> {
        TRY(int total, steps::count(d));
        int upto = req.step < 0 ? total : req.step;
        if (upto > total)
            return base::error("no step " + std::to_string(upto) + ": the session has steps 1.." +
                               std::to_string(total) + "; see 'layover log'");
        TRY_VOID(steps::fork_steps(d, tmp, upto));
        return std::to_string(upto);
    });
    if (!r) {
        steps::remove_flat(tmp);
        return refuse(r.error().message);
    }
    return {true, std::atoi(r->c_str()), "", 0};
}
