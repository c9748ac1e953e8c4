#include "helper/store/records/root_mode.h"

#include <sys/stat.h>

namespace session {

base::Result<void> match_root_mode(const std::string& upper, const std::string& target) {
    struct stat st;
    if (::stat(target.c_str(), &st) != 0) return base::sys_error("reading the mode of " + target);
    if (::chmod(upper.c_str(), (st.st_mode & 07777) | 0500) != 0)
        return base::sys_error("setting the mode of " + upper);
    return base::Ok();
}

}  // namespace session
