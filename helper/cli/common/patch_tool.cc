#include "helper/cli/common/patch_tool.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "helper/base/self_exe.h"

// The verbs that need libarchive/libzstd live in layover-patch, so `run`
// never loads them (about 2.7 ms of start-up). Find it beside this binary,
// or in ../lib/layover/ for an installed layout.
int exec_patch_tool(char** argv) {
    std::string self = base::self_exe();
    if (self.empty()) {
        std::fprintf(stderr, "layover: cannot find own binary (/proc not mounted?)\n");
        return 1;
    }
    std::string dir = base::dir_of(self);
    for (std::string cand : {dir + "/layover-patch", dir + "/../lib/layover/layover-patch"}) {
        if (::access(cand.c_str(), X_OK) == 0) {
            ::execv(cand.c_str(), argv);
            std::fprintf(stderr, "layover: cannot run %s: %s\n", cand.c_str(), std::strerror(errno));
            return 1;
        }
    }
    std::fprintf(stderr, "layover: layover-patch not found beside %s; reinstall layover (make install)\n",
                 self.c_str());
    return 1;
}
