// layover: run a program over an overlay of a real tree, then review.
// Exit codes: 0 ok, 1 failure, 2 usage; `run` passes on the child's status
// and uses 125 (layover failed), 126 (not executable), 127 (not found).
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "helper/base/fd.h"
#include "helper/base/self_exe.h"
#include "helper/base/suggest.h"
#include "helper/base/text.h"
#include "helper/base/title.h"
#include "helper/base/version.h"
#include "helper/cli/common/config.h"
#include "helper/cli/common/patch_tool.h"
#include "helper/cli/common/verbs.h"
#include "helper/sandbox/seccomp/seccomp.h"

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
        "See 'layover help VERB' (or 'layover VERB --help'), 'man layover', docs/cli.md.\n",
        to);
}

// The verbs `layover --help` lists (not the internal ones), and help.
std::vector<std::string> listed_verbs() {
    std::vector<std::string> out{"help", "version"};
#define LAYOVER_LISTED(name, fn, bin, usage) \
    if (usage) out.emplace_back(name);
    LAYOVER_VERBS(LAYOVER_LISTED)
#undef LAYOVER_LISTED
    return out;
}

bool is_verb(const std::string& verb) {
#define LAYOVER_IS_VERB(name, fn, bin, usage) \
    if (verb == name) return true;
    LAYOVER_VERBS(LAYOVER_IS_VERB)
#undef LAYOVER_IS_VERB
    return false;
}

// Other tools' words for a verb (docker's and podman's `ls`, `ps`, `rm`)
// name it too: they are no typo of it.
std::string verb_for_word(const std::string& word) {
    static const struct {
        const char* word;
        const char* verb;
    } kWords[] = {{"ls", "sessions"}, {"list", "sessions"}, {"ps", "sessions"}, {"history", "log"}, {"rm", "discard"}};
    for (const auto& w : kWords)
        if (word == w.word) return w.verb;
    return base::nearest_name(word, listed_verbs());
}

// "unknown verb 'statu' (did you mean 'status'?)": as a mistyped option is
// named (helper/base/suggest.h); the verb is quoted as any name on screen.
int unknown_verb(const std::string& verb) {
    std::string near = verb_for_word(verb);
    std::fprintf(stderr, "layover: unknown verb '%s'%s; see 'layover --help'\n", base::display_path(verb).c_str(),
                 near.empty() ? "" : (" (did you mean '" + near + "'?)").c_str());
    return 2;
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
    // `layover help VERB` is `layover VERB --help`, as `git help VERB` is.
    char* help_argv[] = {nullptr, const_cast<char*>("--help"), nullptr};
    if (verb == "help" && argc >= 3 && argv[2][0] != '-') {
        if (!is_verb(argv[2])) return unknown_verb(argv[2]);
        verb = argv[2];
        help_argv[0] = argv[2];
        vargv = help_argv;
        vargc = 2;
    }
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
    return unknown_verb(verb);
}
