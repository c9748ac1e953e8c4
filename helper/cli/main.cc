// layover: run a program over an overlay of a real tree, then review.
// Exit codes: 0 ok, 1 failure, 2 usage; `run` passes on the child's status
// and uses 125 (layover failed), 126 (not executable), 127 (not found).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "helper/base/fd.h"
#include "helper/base/self_exe.h"
#include "helper/base/title.h"
#include "helper/base/version.h"
#include "helper/cli/config.h"
#include "helper/cli/patch_tool.h"
#include "helper/cli/verbs.h"
#include "helper/sandbox/seccomp.h"

namespace {

void usage_line(FILE* to, const char* line) {
    if (line) std::fprintf(to, "  %s\n", line);
}

void print_usage(FILE* to) {
    std::fputs("usage: layover VERB [ARGS]\n", to);
#define LAYOVER_USAGE_LINE(name, fn, bin, usage) usage_line(to, usage);
    LAYOVER_VERBS(LAYOVER_USAGE_LINE)
#undef LAYOVER_USAGE_LINE
    std::fputs(
        "Every verb also takes --no-config: leave out ~/.config/layover/config.toml ('layover config').\n"
        "See docs/cli.md, or 'layover VERB --help'.\n",
        to);
}

}  // namespace

int main(int argc, char** argv) {
    base::ensure_std_fds(true);  // fds 0-2 open before anything else is opened (helper/base/fd.h)
    base::remember_argv(argc, argv);
    if (argc < 2) {
        print_usage(stderr);
        return 2;
    }
    std::string verb = argv[1];
    char** vargv = argv + 1;
    int vargc = argc - 1;
    // A verb of layover-patch is only named here in a discarded statement, so
    // this binary never links its code (nor libarchive, nor libzstd).
#define LAYOVER_DISPATCH(name, fn, bin, usage)                                      \
    if (verb == name) {                                                             \
        if constexpr (bin != Bin::Patch) return cli::with_config(vargc, vargv, fn); \
        else return exec_patch_tool(vargv);                                         \
    }
    LAYOVER_VERBS(LAYOVER_DISPATCH)
#undef LAYOVER_DISPATCH
    if (verb == "--export-seccomp") {
        // Internal, for `make bench`: the command's deny table as raw BPF on
        // stdout (bwrap --seccomp reads this format). Not in --help.
        auto r = seccomp::export_bpf(default_seccomp_rules(), STDOUT_FILENO);
        if (!r) std::fprintf(stderr, "layover: %s\n", r.error().message.c_str());
        return r ? 0 : 1;
    }
    if (verb == "--version" || verb == "version") {
        std::printf("layover %s\n", LAYOVER_VERSION);
        return 0;
    }
    if (verb == "-h" || verb == "--help" || verb == "help") {
        print_usage(stdout);
        return 0;
    }
    std::fprintf(stderr, "layover: unknown verb '%s'; see 'layover --help'\n", verb.c_str());
    return 2;
}
