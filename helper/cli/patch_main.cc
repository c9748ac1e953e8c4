// layover-patch: the verbs that read or write patches (libarchive, zstd).
// `layover` execs it with argv starting at the verb; it is not meant to be
// called directly, but works the same when it is.
#include <malloc.h>

#include <cstdio>
#include <string>

#include "helper/cli/verbs.h"

int main(int argc, char** argv) {
    if (argc < 1 || !argv[0]) return 2;
    // The patch verbs allocate and free MiB-sized buffers all along (zstd,
    // libarchive, chunks of member data). glibc would map and unmap each
    // one, or trim the heap after it, and fault fresh zeroed pages in every
    // time (measured: ~5% of an apply of 10k files). Keep them in the heap.
    ::mallopt(M_MMAP_THRESHOLD, 32 << 20);
    ::mallopt(M_TRIM_THRESHOLD, 128 << 20);
    // Called as `layover-patch VERB ...` or exec'd by layover with argv[0]=VERB.
    std::string verb = argv[0];
    auto slash = verb.rfind('/');
    if (verb.substr(slash == std::string::npos ? 0 : slash + 1) == "layover-patch") {
        if (argc < 2) {
            std::fputs("usage: layover-patch VERB [ARGS] (see 'layover --help')\n", stderr);
            return 2;
        }
        argv++;
        argc--;
        verb = argv[0];
    }
    if (verb == "status") return cmd_status(argc, argv);
    if (verb == "save") return cmd_save(argc, argv);
    if (verb == "show") return cmd_show(argc, argv);
    if (verb == "diff") return cmd_diff(argc, argv);
    if (verb == "apply") return cmd_apply(argc, argv);
    if (verb == "undo") return cmd_undo(argc, argv);
    if (verb == "on-exit") return cmd_on_exit(argc, argv);
    std::fprintf(stderr, "layover: unknown verb '%s'; see 'layover --help'\n", verb.c_str());
    return 2;
}
