// Fork of a kept session (docs/history.md): the new session refers to the
// source's frozen layers in the layer store; no file is copied or linked.
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#include "helper/base/dir.h"
#include "helper/base/fault.h"
#include "helper/base/fd.h"
#include "helper/store/layers/layer_store.h"
#include "helper/store/layers/steps.h"
#include "helper/store/records/known_bases.h"
#include "helper/store/session/first_copies.h"

namespace steps {

base::Result<void> fork_steps(const std::string& from, const std::string& to, int at) {
    if (::mkdir(to.c_str(), 0700) != 0) return base::sys_error("creating " + to);
    if (::mkdir((to + "/upper").c_str(), 0755) != 0) return base::sys_error("creating " + to + "/upper");
    if (at == 0) return base::Ok();
    session::copy_first_copies(from, to);  // the shared layers' dropped copies (helper/store/session/first_copies.h)
    TRY_VOID(check_reachable(from, at));
    if (::mkdir(steps_dir(to).c_str(), 0700) != 0) return base::sys_error("creating " + steps_dir(to));
    // Held while references are made: gc's sweep (exclusive) never sees a layer half-referenced.
    TRY(base::Fd store_lock, lock_store(store_dir(from), false));
    for (int i = 1; i <= at; i++) TRY_VOID(share(from, steps_dir(from), i));
    TRY_VOID(base::fault_point("fork", "shared"));
    for (int i = 1; i <= at; i++) {
        TRY_VOID(copy_ref(steps_dir(from), steps_dir(to), i));
        TRY_VOID(base::fault_point("fork", "ref"));
    }
    // The real contents the source knew (helper/store/records/known_bases.h), as
    // evidence that a real file was there: gone since, it is a conflict in
    // the fork too, never brought back. Not as fresh bases: the source's
    // later runs and applies knew contents the fork's copies never saw.
    TRY_VOID(session::inherit_known_bases(from, to));
    return base::Ok();
}

}  // namespace steps

namespace steps {

std::vector<std::string> stale_forks(const std::string& sessions) {
    std::vector<std::string> out;
    base::Fd dir(::open(sessions.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!dir.valid()) return out;
    auto names = base::list_dir(dir.get());
    if (!names) return out;
    for (const auto& e : names.value()) {
        const std::string& n = e.name;
        auto dot = n.rfind('.');
        if (n.rfind(".fork-", 0) != 0 || dot <= 6 || dot + 1 >= n.size()) continue;
        std::string pid = n.substr(dot + 1);
        if (pid.find_first_not_of("0123456789") != std::string::npos || pid.size() > 9) continue;
        if (::kill(static_cast<pid_t>(std::atol(pid.c_str())), 0) == 0 || errno == EPERM) continue;  // still forking
        out.push_back(sessions + "/" + n);
    }
    return out;
}

}  // namespace steps
