#include "helper/cli/common/flags.h"

#include <algorithm>

namespace cli {

namespace {

constexpr Arg N = Arg::None, V = Arg::Value, O = Arg::Optional;
constexpr bool once = false, many = true;
constexpr Cfg any = Cfg::Any, table = Cfg::Table, no = Cfg::No;

// One row per long option of each verb, as its parser and its --help text
// have it (tests/integration/test_config.py checks both ways). `def` is the
// default `layover config` shows. -h/--help is every verb's and not listed.
const std::vector<Flag> kFlags = {
    {"run", "target", 0, V, once, any, "$HOME"},
    {"run", "session", 0, V, once, no, ""},
    {"run", "on-exit", 0, V, once, any, "prompt on a terminal, else keep"},
    {"run", "network", 0, V, once, any, "loopback"},
    {"run", "hide", 0, V, many, any, ""},
    {"run", "hide-secrets", 0, N, once, any, "true"},
    {"run", "no-hide-secrets", 0, N, once, any, ""},
    {"run", "env-keep", 0, V, many, any, ""},
    {"run", "env", 0, V, many, any, ""},
    {"run", "env-clear", 0, N, once, any, ""},
    {"run", "cwd", 0, V, once, any, ""},
    {"run", "ro", 0, V, many, any, ""},
    {"run", "rw", 0, V, many, any, ""},
    {"run", "wait", 0, N, once, any, ""},
    {"run", "home", 0, V, once, any, "scratch"},
    {"run", "timeout", 0, V, once, any, "24h"},
    {"run", "max-pids", 0, V, once, any, "4096"},
    {"run", "max-size", 0, V, once, any, "none"},
    {"run", "max-memory", 0, V, once, any, "none"},
    {"run", "min-free", 0, V, once, any,
     "5% of the state dir's filesystem, 256M-1G; and 5% of its inodes, 10000-1000000"},
    {"run", "tmp-size", 0, V, once, any, "25% of RAM, at most 2G"},
    {"run", "ipc-fd", 0, V, once, no, ""},
    {"run", "quiet", 'q', N, once, any, ""},
    {"run", "max-steps", 0, V, once, any, "64"},
    {"sessions", "json", 0, N, once, any, ""},
    {"sessions", "trash", 0, N, once, any, ""},
    {"status", "json", 0, N, once, any, ""},
    {"status", "expand", 0, N, once, any, ""},
    {"status", "outside", 0, N, once, any, ""},
    {"status", "no-pager", 0, N, once, any, ""},
    {"save", "output", 'o', V, once, no, ""},
    {"show", "json", 0, N, once, any, ""},
    {"show", "expand", 0, N, once, any, ""},
    {"show", "no-pager", 0, N, once, any, ""},
    {"show", "max-members", 0, V, once, any, ""},
    {"show", "max-stored-bytes", 0, V, once, any, ""},
    {"show", "max-logical-bytes", 0, V, once, any, ""},
    {"show", "max-name-len", 0, V, once, any, ""},
    {"show", "max-pax-header", 0, V, once, any, ""},
    {"show", "steps", 0, N, once, any, ""},
    {"show", "contents", 0, N, once, any, ""},
    {"diff", "stat", 0, N, once, any, ""},
    {"diff", "name-status", 0, N, once, any, ""},
    {"diff", "color", 0, O, once, any, "auto"},
    {"diff", "no-pager", 0, N, once, any, ""},
    {"diff", "flat", 0, N, once, any, ""},
    {"apply", "target", 0, V, once, table, ""},
    {"apply", "dry-run", 'n', N, once, any, ""},
    {"apply", "force", 0, N, once, any, ""},
    {"apply", "only", 0, V, many, no, ""},
    {"apply", "exclude", 0, V, many, any, ""},
    {"apply", "yes", 'y', N, once, any, ""},
    {"apply", "undo-to", 0, V, once, no, ""},
    {"apply", "json", 0, N, once, any, ""},
    {"undo", "target", 0, V, once, table, ""},
    {"undo", "force", 0, N, once, any, ""},
    {"undo", "dry-run", 'n', N, once, any, ""},
    {"undo", "json", 0, N, once, any, ""},
    {"undo", "yes", 'y', N, once, any, ""},
    // mcp passes these to the `layover run` it starts, which reads the
    // config file itself: the file never sets them on mcp (no doubling).
    {"mcp", "target", 0, V, once, no, "$HOME"},
    {"mcp", "session", 0, V, once, no, "mcp-DATE-TIME"},
    {"mcp", "on-exit", 0, V, once, no, "keep"},
    {"mcp", "network", 0, V, once, no, ""},
    {"mcp", "home", 0, V, once, no, ""},
    {"mcp", "hide", 0, V, many, no, ""},
    {"mcp", "no-hide-secrets", 0, N, once, no, ""},
    {"mcp", "env-keep", 0, V, many, no, ""},
    {"mcp", "env", 0, V, many, no, ""},
    {"mcp", "env-clear", 0, N, once, no, ""},
    {"mcp", "cwd", 0, V, once, no, ""},
    {"mcp", "ro", 0, V, many, no, ""},
    {"mcp", "rw", 0, V, many, no, ""},
    {"mcp", "timeout", 0, V, once, no, ""},
    {"mcp", "max-pids", 0, V, once, no, ""},
    {"mcp", "max-size", 0, V, once, no, ""},
    {"mcp", "max-memory", 0, V, once, no, ""},
    {"mcp", "min-free", 0, V, once, no, ""},
    {"mcp", "tmp-size", 0, V, once, no, ""},
    {"mcp", "wait", 0, N, once, no, ""},
    {"mcp", "quiet", 0, N, once, no, ""},
    {"mcp", "keep-empty", 0, N, once, no, ""},
    {"status", "ignore", 0, V, many, any, ""},
    {"status", "no-default-ignores", 0, N, once, any, ""},
    {"status", "include-ignored", 0, N, once, any, ""},
    {"save", "ignore", 0, V, many, any, ""},
    {"save", "no-default-ignores", 0, N, once, any, ""},
    {"save", "include-ignored", 0, N, once, any, ""},
    {"diff", "ignore", 0, V, many, any, ""},
    {"diff", "no-default-ignores", 0, N, once, any, ""},
    {"diff", "include-ignored", 0, N, once, any, ""},
    {"apply", "ignore", 0, V, many, any, ""},
    {"apply", "no-default-ignores", 0, N, once, any, ""},
    {"apply", "include-ignored", 0, N, once, any, ""},
    {"run", "keep-empty", 0, N, once, any, ""},
    {"apply", "keep-undo", 0, V, once, any, "20"},
    {"apply", "keep-undo-days", 0, V, once, any, "30"},
    {"undo", "last", 0, N, once, no, ""},
    {"undo", "list", 0, N, once, no, ""},
    {"gc", "older-than", 0, V, once, any, "30d"},
    {"gc", "applied", 0, N, once, any, ""},
    {"gc", "dry-run", 0, N, once, no, ""},
    {"gc", "trash", 0, N, once, no, ""},
    {"gc", "keep-undo", 0, V, once, any, "20"},
    {"gc", "keep-undo-days", 0, V, once, any, "30"},
    {"doctor", "target", 0, V, once, any, "$HOME"},
    {"config", "path", 0, N, once, no, ""},
    {"config", "keys", 0, N, once, no, ""},
    {"log", "json", 0, N, once, any, ""},
    {"rollback", "undo", 0, N, once, no, ""},
    {"fork", "at", 0, V, once, no, ""},
    {"checkpoint", "message", 'm', V, once, no, ""},
    {"checkpoint", "json", 0, N, once, no, ""},
    {"diff", "hunk-numbers", 0, N, once, any, ""},
    {"apply", "hunks", 0, V, many, no, ""},
    {"apply", "exclude-hunks", 0, V, many, no, ""},
    {"save", "no-originals", 0, N, once, any, ""},
    {"apply", "conflict", 0, V, once, no, ""},
    {"status", "risk", 0, N, once, no, ""},
    {"diff", "mask-secrets", 0, N, once, any, ""},
    {"apply", "allow-secrets", 0, N, once, no, ""},
    {"doctor", "fix", 0, N, once, no, ""},
    {"reject", "message", 'm', V, once, no, ""},
    {"rejections", "json", 0, N, once, any, ""},
    {"apply", "include-rejected", 0, N, once, no, ""},
    {"discard", "rejected", 0, N, once, no, ""},
    {"discard", "now", 0, N, once, no, ""},
    {"status", "step", 0, V, once, no, ""},
    {"status", "steps", 0, V, once, no, ""},
    {"diff", "step", 0, V, once, no, ""},
    {"diff", "steps", 0, V, once, no, ""},
    {"save", "upto", 0, V, once, no, ""},
    {"apply", "upto", 0, V, once, no, ""},
    {"compare", "json", 0, N, once, no, ""},
    {"apply", "patch", 'p', N, once, no, ""},
    {"apply", "interactive", 0, N, once, no, ""},
    {"save", "include-rejected", 0, N, once, no, ""},
    {"diff", "target", 0, V, once, no, ""},
};

}  // namespace

const std::vector<Flag>& all_flags() { return kFlags; }

std::vector<std::string> table_verbs() {
    std::vector<std::string> out;
    for (const auto& f : kFlags)
        if (std::find(out.begin(), out.end(), f.verb) == out.end()) out.push_back(f.verb);
    return out;
}

const Flag* find_flag(const std::string& verb, const std::string& name) {
    for (const auto& f : kFlags)
        if (verb == f.verb && name == f.name) return &f;
    return nullptr;
}

bool options_end_at_operand(const std::string& verb) { return verb == "run"; }

}  // namespace cli
