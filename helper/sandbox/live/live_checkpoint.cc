#include "helper/sandbox/live/live_checkpoint.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "helper/base/clock.h"
#include "helper/base/dir.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/sandbox/live/live_holders.h"
#include "helper/sandbox/prepare/prepare.h"
#include "helper/sandbox/rename/rename_notify.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/owner_ns.h"
#include "helper/store/records/root_mode.h"
#include "helper/store/session/session.h"

namespace {

// One request to setup and its answer.
base::Result<void> ask(int fd, const std::string& req) {
    if (fd < 0) return base::error("the sandbox's setup process does not serve checkpoints");
    if (::send(fd, req.data(), req.size(), MSG_NOSIGNAL) != static_cast<ssize_t>(req.size()))
        return base::sys_error("asking the sandbox's setup process");
    struct pollfd p = {fd, POLLIN, 0};
    if (::poll(&p, 1, 30000) != 1) return base::error("the sandbox's setup process did not answer");
    char buf[4096];
    ssize_t n = ::recv(fd, buf, sizeof buf, 0);
    if (n <= 0) return base::error("the sandbox's setup process is gone");
    std::string a(buf, static_cast<size_t>(n));
    if (a == "0") return base::Ok();
    size_t tab = a.find('\t');
    int code = std::atoi(a.c_str() + 1);
    return base::Error{tab == std::string::npos ? a.substr(1) : a.substr(tab + 1), code};
}

control::Reply refuse(const std::string& msg) { return {false, 0, msg}; }

// Take the top step back into the live upper: the exchange of the freeze
// undone, its empty layer and record removed.
base::Result<void> unfreeze(const std::string& d, int n) {
    std::string upper = d + "/upper", layer = steps::layer_dir(d, n);
    if (::renameat2(AT_FDCWD, upper.c_str(), AT_FDCWD, layer.c_str(), RENAME_EXCHANGE) != 0)
        return base::sys_error("taking step " + std::to_string(n) + " back into " + upper);
    ::rmdir(layer.c_str());
    ::unlink(steps::record_file(d, n).c_str());
    return base::Ok();
}

std::string work_name(int n) {
    char ck[16];
    std::snprintf(ck, sizeof ck, "ck%04d", n);
    return ck;
}

bool upper_empty(const std::string& d) {
    auto up = base::open_at(AT_FDCWD, session::upper_dir(d), O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
    if (!up) return false;
    auto names = base::list_dir(up->get());
    return names && names->empty();
}

}  // namespace

namespace live {

base::Result<std::string> fresh_work(const std::string& d, const std::string& base) {
    std::string name = base;
    for (int i = 1; i < 1000; i++) {
        std::string p = session::work_dir(d) + "/" + name;
        if (::mkdir(p.c_str(), 0700) == 0) return name;
        struct stat st;
        if (errno != EEXIST || ::lstat(p.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
            return base::sys_error("creating the next overlay's work dir " + p);
        name = base + "." + std::to_string(i);
    }
    return base::error("no free work dir for the next overlay in " + session::work_dir(d));
}

}  // namespace live

LiveCheckpoint::Stack LiveCheckpoint::stack() const {
    Stack s;
    auto c = steps::count(run_.session_dir);
    s.count = c ? c.value() : -1;
    struct stat st;
    if (::stat(session::upper_dir(run_.session_dir).c_str(), &st) == 0) s.upper = st.st_ino;
    return s;
}

std::string LiveCheckpoint::hold(pid_t init, const std::string& verb) {
    const std::string& name = run_.meta.name;
    const std::string& target = run_.plan.mounts.target;
    if (init <= 0) return "session '" + name + "' is still starting; try again";
    // The worker writes its copy in the upper: read-only midway, it would
    // fail and leave it half-made in the step. While this request is
    // served no call reaches the worker (one loop), so none starts after.
    if (renames_ && renames_->copying())
        return "a directory rename in session '" + name + "' is being copied; nothing changed: let it finish, then " +
               verb + " again";
    auto ro = ask(fd_, "R");
    if (!ro) {
        if (ro.error().code != EBUSY) return ro.error().message;
        auto h = find_holders(init, target, true);
        return "a process in session '" + name +
               "' writes to it: " + (h.empty() ? std::string("a file is open for writing") : describe_holders(h)) +
               "; nothing changed: close it (or let it finish), then " + verb + " again";
    }
    auto h = find_holders(init, target, false);
    if (!h.empty())
        return release("a process in session '" + name + "' would stay on the frozen view: " + describe_holders(h) +
                       "; nothing changed: let it leave the target (cd /) or finish, then " + verb + " again")
            .error;
    auto f = base::fault_point("live", "readonly");
    if (!f) return release(f.error().message + "; nothing changed").error;
    // A dead worker's half-made copy, never frozen into a step.
    if (renames_) renames_->sweep_upper();
    return "";
}

control::Reply LiveCheckpoint::release(const std::string& msg) {
    auto rw = ask(fd_, "W");
    return refuse(rw ? msg : msg + "; and remounting it read-write failed: " + rw.error().message);
}

base::Result<void> LiveCheckpoint::mount_disk(const Stack& held) {
    const std::string& d = run_.session_dir;
    auto live_before = steps::read_live(d);
    std::string run_label = live_before ? live_before->label : "";
    auto done = capture::in_owner_ns([&]() -> base::Result<std::string> {
        if (!upper_empty(d)) {
            TRY(int n, steps::freeze_live(d, run_.plan.mounts.target, base::utc_now_rfc3339(), steps::kMaxSteps));
            (void)n;
        } else if (stack().upper == held.upper) {
            // The mounted overlay's empty upper: set aside (it stays in use), a fresh one made.
            TRY(std::string aside, live::fresh_work(d, "up"));
            std::string to = session::work_dir(d) + "/" + aside + "/upper";
            if (::rename(session::upper_dir(d).c_str(), to.c_str()) != 0 ||
                ::mkdir(session::upper_dir(d).c_str(), 0755) != 0)
                return base::sys_error("setting the live upper aside to " + to);
            TRY_VOID(session::match_root_mode(session::upper_dir(d), run_.plan.mounts.target));
        }
        TRY(int n, steps::count(d));
        TRY(std::string work, live::fresh_work(d, work_name(n)));
        return std::to_string(n) + " " + work;
    });
    if (!done) return done.error();
    TRY_VOID(ask(fd_, "M" + done.value()));
    (void)steps::write_live(d, {run_label, base::utc_now_rfc3339(), ""});
    return base::fault_point("live", "mounted");
}

control::Reply LiveCheckpoint::settle(const Stack& held, const std::string& msg) {
    const std::string& d = run_.session_dir;
    // A rollback or undo cut short: finished or undone as a rerun would.
    (void)capture::in_owner_ns([&]() -> base::Result<std::string> { return steps::finish_pending(d); });
    if (stack() == held) return release(msg + "; nothing changed");
    auto m = mount_disk(held);
    if (!m)
        return refuse(msg + "; the session's layers had changed, and mounting them failed: " + m.error().message +
                      "; its view stays read-only: stop the session and resume it");
    return refuse(msg + "; it was cut short after changing the session's layers: the session runs on what they hold " +
                  "now (see 'layover log " + run_.meta.name + "')");
}

control::Reply LiveCheckpoint::serve(const control::Request& req, pid_t init) {
    if (req.op == "rollback" || req.op == "undo") return rollback(req, init);
    if (req.op == "revert") return revert(req, init);
    if (req.op == "fork") return fork(req, init);
    return checkpoint(req.label, init);
}

control::Reply LiveCheckpoint::checkpoint(const std::string& req_label, pid_t init, const std::string& verb) {
    const std::string& target = run_.plan.mounts.target;
    const std::string& d = run_.session_dir;
    std::string refused = hold(init, verb);
    if (!refused.empty()) return refuse(refused);
    Stack held = stack();
    auto live_before = steps::read_live(d);
    std::string run_label = live_before ? live_before->label : "";
    std::string label = req_label.empty() ? run_label : req_label;
    auto frozen = capture::in_owner_ns([&]() -> base::Result<std::string> {
        // Past the depth limit the oldest two layers become one, as at a
        // resume; the layers it replaces are moved aside, not removed: the
        // covered overlays still read them (docs/history.md).
        auto live = steps::read_live(d);
        steps::Live l = live ? live.value() : steps::Live{};
        l.label = label;
        TRY_VOID(steps::write_live(d, l));
        TRY(int n, steps::freeze_live(d, target, base::utc_now_rfc3339(), run_.max_steps, "live", true));
        std::string work;
        if (n > 0) {
            auto w = live::fresh_work(d, work_name(n));
            if (!w) {
                (void)unfreeze(d, n);
                return w.error();
            }
            work = w.value();
        }
        // The stack's first layer after a squash, for the next mount.
        TRY(int first, steps::first_layer(d));
        return std::to_string(n) + " " + work + " " + std::to_string(first);
    });
    if (!frozen) return settle(held, "freezing the live layer: " + frozen.error().message);
    int n = std::atoi(frozen->c_str());
    if (n == 0) {  // no changes: no step, the overlay as it was
        auto rw = ask(fd_, "W");
        if (!rw) return refuse("remounting the overlay read-write: " + rw.error().message);
        return {true, 0, ""};
    }
    auto changed = base::fault_point("live", "changed");
    auto mounted = changed ? ask(fd_, "M" + frozen.value()) : changed;
    if (!mounted) {
        auto back = unfreeze(d, n);
        std::string msg = "mounting the next step's overlay: " + mounted.error().message;
        if (!back)
            return refuse(msg + "; and taking the step back failed: " + back.error().message +
                          "; its view stays read-only: stop the session and resume it");
        return release(msg + "; nothing changed");
    }
    (void)steps::write_live(d, {run_label, base::utc_now_rfc3339(), ""});
    auto f = base::fault_point("live", "mounted");
    if (!f) return refuse(f.error().message);
    return {true, n, ""};
}
