// layover: run a program over an overlay of a real tree, then review.
// Exit codes: 0 ok, 1 failure, 2 usage; `run` passes on the child's status
// and uses 125 (layover failed), 126 (not executable), 127 (not found).
#include <limits.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "helper/cli/verbs.h"
#include "helper/base/version.h"

namespace {

const char kUsage[] =
    "usage: layover VERB [ARGS]\n"
    "  run [--target DIR] [--session NAME] [--on-exit MODE] [--] [CMD [ARG...]]\n"
    "  sessions [--json] [--trash]     list sessions\n"
    "  status [SESSION] [--json]       changes of a session\n"
    "  save SESSION -o FILE.tar.zst    write a patch\n"
    "  show FILE.tar.zst [--json]      summary of a patch\n"
    "  diff SESSION|PATCH [--stat] [--name-status] [--color=WHEN] [-- PATH...]\n"
    "  apply SESSION|PATCH [--target DIR] [--dry-run] [--force] [--only PATH] [--exclude GLOB] [--yes]\n"
    "  undo UNDO.tar.zst [--target DIR]\n"
    "  discard SESSION                 remove a session\n"
    "  restore NAME                    bring a discarded session back from the trash\n"
    "  doctor [--target DIR]           check what layover needs from the kernel\n"
    "See docs/cli.md, or 'layover VERB --help'.\n";

// The verbs that need libarchive/libzstd live in layover-patch, so `run`
// never loads them (about 2.7 ms of start-up). Find it beside this binary,
// or in ../lib/layover/ for an installed layout.
int exec_patch_tool(char** argv) {
    char self[PATH_MAX];
    ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        std::fprintf(stderr, "layover: cannot find own binary (/proc not mounted?)\n");
        return 1;
    }
    self[n] = '\0';
    std::string dir(self);
    dir.resize(dir.rfind('/'));
    for (std::string cand : {dir + "/layover-patch", dir + "/../lib/layover/layover-patch"}) {
        if (::access(cand.c_str(), X_OK) == 0) {
            ::execv(cand.c_str(), argv);
            std::fprintf(stderr, "layover: cannot run %s: %s\n", cand.c_str(), std::strerror(errno));
            return 1;
        }
    }
    std::fprintf(stderr, "layover: layover-patch not found beside %s; reinstall layover (make install)\n", self);
    return 1;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fputs(kUsage, stderr);
        return 2;
    }
    std::string verb = argv[1];
    char** vargv = argv + 1;
    int vargc = argc - 1;
    if (verb == "run") return cmd_run(vargc, vargv);
    if (verb == "sessions") return cmd_sessions(vargc, vargv);
    if (verb == "discard") return cmd_discard(vargc, vargv);
    if (verb == "restore") return cmd_restore(vargc, vargv);
    if (verb == "doctor") return cmd_doctor(vargc, vargv);
    if (verb == "status") return cmd_status(vargc, vargv);
    if (verb == "save" || verb == "show" || verb == "diff" || verb == "apply" ||
        verb == "undo" || verb == "on-exit")
        return exec_patch_tool(vargv);
    if (verb == "--version" || verb == "version") {
        std::printf("layover %s\n", LAYOVER_VERSION);
        return 0;
    }
    if (verb == "-h" || verb == "--help" || verb == "help") {
        std::fputs(kUsage, stdout);
        return 0;
    }
    std::fprintf(stderr, "layover: unknown verb '%s'; see 'layover --help'\n", verb.c_str());
    return 2;
}
