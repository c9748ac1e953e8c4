#include "review/prompt/trash.h"

#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "helper/base/fault.h"

namespace review {

base::Result<std::string> move_to_trash(const std::string& state, const session::Info& s) {
    const std::string& name = s.meta.name;
    // Held across the rename: a run resuming the session between a check and
    // the rename had its live session moved into the trash (attack24).
    auto lk = session::lock(s.dir, name);
    if (!lk) {
        if (session::is_locked(s.dir))
            return base::error("session '" + name + "' is running; stop it before discarding it");
        return lk.error().context("discarding session '" + name + "' (it is kept)");
    }
    TRY_VOID(base::fault_point("discard", "locked"));
    std::string trash = session::trash_dir(state);
    if (::mkdir(trash.c_str(), 0700) != 0 && errno != EEXIST)
        return base::sys_error("create trash dir " + trash).context("discarding session '" + name + "'");
    for (int n = 0; n < 1000; n++) {
        std::string dest = trash + "/" + name + (n ? "." + std::to_string(n) : "");
        // NOREPLACE: an older discard under the same name is never clobbered.
        if (::renameat2(AT_FDCWD, s.dir.c_str(), AT_FDCWD, dest.c_str(), RENAME_NOREPLACE) == 0) return dest;
        if (errno != EEXIST && errno != ENOTEMPTY)
            return base::sys_error("move " + s.dir + " to " + dest)
                .context("discarding session '" + name + "' (it is kept)");
    }
    return base::error("discarding session '" + name + "': too many trash entries named " + name + "; empty " + trash);
}

std::string trash_entry(const std::string& trashed) { return trashed.substr(trashed.rfind('/') + 1); }

std::string trashed_line(const std::string& name, const std::string& trashed) {
    return "session '" + name + "' moved to the trash for 24 hours; 'layover restore " + trash_entry(trashed) +
           "' brings it back";
}

}  // namespace review
