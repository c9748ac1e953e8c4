#include "helper/sandbox/live_checkpoint.h"

#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "helper/base/clock.h"
#include "helper/sandbox/live_holders.h"
#include "helper/sandbox/prepare.h"
#include "helper/store/owner_ns.h"
#include "helper/store/session.h"
#include "helper/store/steps.h"

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

}  // namespace

control::Reply LiveCheckpoint::serve(const control::Request& req, pid_t init) {
    const std::string& name = run_.meta.name;
    const std::string& target = run_.plan.mounts.target;
    const std::string& d = run_.session_dir;
    if (init <= 0) return refuse("session '" + name + "' is still starting; try again");
    auto ro = ask(fd_, "R");
    if (!ro) {
        if (ro.error().code != EBUSY) return refuse(ro.error().message);
        auto h = find_holders(init, target, true);
        return refuse("a process in session '" + name + "' writes to it: " +
                      (h.empty() ? std::string("a file is open for writing") : describe_holders(h)) +
                      "; nothing changed: close it (or let it finish), then checkpoint again");
    }
    auto rw_again = [&](const std::string& msg) {
        auto rw = ask(fd_, "W");
        return refuse(rw ? msg : msg + "; and remounting it read-write failed: " + rw.error().message);
    };
    auto h = find_holders(init, target, false);
    if (!h.empty())
        return rw_again("a process in session '" + name + "' would stay on the frozen view: " + describe_holders(h) +
                        "; nothing changed: let it leave the target (cd /) or finish, then checkpoint again");
    auto live_before = steps::read_live(d);
    std::string run_label = live_before ? live_before->label : "";
    std::string label = req.label.empty() ? run_label : req.label;
    auto frozen = capture::in_owner_ns([&]() -> base::Result<std::string> {
        // The mounted overlays read the layers: no squash while the session
        // runs; the next resume squashes (docs/history.md).
        TRY(int total, steps::count(d));
        TRY(int first, steps::first_layer(d));
        int depth = total - first + 1;
        if (depth >= steps::kMaxDepth)
            return base::error("the session's stack is " + std::to_string(depth) +
                               " layers deep, the most a running session's holds; stop the session and resume it "
                               "(the resume squashes the oldest steps), then checkpoint");
        auto live = steps::read_live(d);
        steps::Live l = live ? live.value() : steps::Live{};
        l.label = label;
        TRY_VOID(steps::write_live(d, l));
        TRY(int n, steps::freeze_live(d, target, base::utc_now_rfc3339(), steps::kMaxSteps));
        if (n > 0) {
            char ck[16];
            std::snprintf(ck, sizeof ck, "/ck%04d", n);
            std::string work = session::work_dir(d) + ck;
            if (::mkdir(work.c_str(), 0700) != 0) {
                auto e = base::sys_error("creating the next overlay's work dir " + work);
                (void)unfreeze(d, n);
                return e;
            }
        }
        return std::to_string(n);
    });
    if (!frozen) return rw_again("freezing the live layer: " + frozen.error().message + "; nothing changed");
    int n = std::atoi(frozen->c_str());
    if (n == 0) {  // no changes: no step, the overlay as it was
        auto rw = ask(fd_, "W");
        if (!rw) return refuse("remounting the overlay read-write: " + rw.error().message);
        return {true, 0, ""};
    }
    auto mounted = ask(fd_, "M" + std::to_string(n));
    if (!mounted) {
        auto back = unfreeze(d, n);
        std::string msg = "mounting the next step's overlay: " + mounted.error().message;
        if (!back) return rw_again(msg + "; and taking the step back failed: " + back.error().message);
        return rw_again(msg + "; nothing changed");
    }
    (void)steps::write_live(d, {run_label, base::utc_now_rfc3339()});
    return {true, n, ""};
}
