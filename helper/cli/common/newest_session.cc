#include "helper/cli/common/newest_session.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "helper/base/text.h"
#include "helper/store/session/session.h"

namespace cli {

std::string newest_session_hint(const char* verb, const char* more) {
    // The state dir as session::state_dir() finds it, but only read: a usage
    // error makes nothing, and a dir that is not the caller's own is no hint.
    const char* env = std::getenv("LAYOVER_STATE_DIR");
    std::string state = env && *env ? env : "/var/tmp/layover-" + std::to_string(::geteuid());
    struct stat st;
    if (state[0] != '/' || ::lstat(state.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid())
        return "";
    auto all = session::list(state);
    if (!all || all->empty()) return "";
    std::string name = base::display_path(all->back().meta.name);
    return " (the most recent is '" + name + "': 'layover " + verb + " " + name + more + "')";
}

}  // namespace cli
