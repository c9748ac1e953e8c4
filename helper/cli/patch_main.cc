// layover-patch: the verbs that read or write patches (libarchive, zstd).
// `layover` execs it with argv starting at the verb; it is not meant to be
// called directly, but works the same when it is.
#include <malloc.h>

#include <cstdio>
#include <string>

#include "helper/base/fd.h"
#include "helper/cli/common/config.h"
#include "helper/cli/common/verbs.h"

int main(int argc, char** argv) {
    base::ensure_std_fds(true);  // fds 0-2 open before anything else is opened (helper/base/fd.h)
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
    // The config file's settings are added here, in the process that runs
    // the verb: `layover` adds none before exec'ing this binary.
#define LAYOVER_DISPATCH(name, fn, bin, usage) \
    if constexpr (bin != Bin::Main)            \
        if (verb == name) return cli::with_config(argc, argv, fn);
    LAYOVER_VERBS(LAYOVER_DISPATCH)
#undef LAYOVER_DISPATCH
    std::fprintf(stderr, "layover: unknown verb '%s'; see 'layover --help'\n", verb.c_str());
    return 2;
}
