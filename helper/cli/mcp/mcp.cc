// `layover mcp`: serve the Model Context Protocol over stdio (docs/mcp.md).
// The server is Python (python/layover/_mcp_server.py, on top of the
// bindings); this verb finds the package and execs python3 with this
// binary's own path, so the server drives the same helper.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "helper/base/self_exe.h"
#include "helper/cli/common/verbs.h"
#include "helper/cli/mcp/mcp_find.h"

namespace mcp {

// Printed here, not by the Python server, so that `layover mcp --help` works
// where the package is missing too (cli.md: every verb's --help exits 0).
const char* const kUsage =
    "usage: layover mcp [--target DIR] [--session NAME] [--on-exit MODE]\n"
    "                   [every isolation option of 'layover run': --network MODE, --home MODE, [--hide PATH]...,\n"
    "                    --no-hide-secrets, [--env-keep GLOB]..., [--env NAME=VALUE]..., --env-clear, --cwd DIR,\n"
    "                    [--ro PATH]..., [--rw PATH]..., --timeout DURATION, --max-pids N, --max-size SIZE,\n"
    "                    --max-memory SIZE, --min-free SIZE, --tmp-size SIZE, --wait, --quiet, --keep-empty]\n"
    "  --on-exit MODE  keep (default), discard or save:FILE (apply is the person's, never the agent's)\n"
    "Serves MCP over stdio: a shell and file tools inside a sandbox over DIR (default $HOME).\n"
    "The session (default mcp-YYYYmmdd-HHMMSS) is kept; review it with layover status/diff/apply.\n"
    "See docs/mcp.md.\n";

std::vector<std::string> python_dirs(const std::string& exe_dir) {
    return {exe_dir + "/../python", exe_dir + "/../lib/layover/python"};
}

std::vector<std::string> python_argv(const std::string& python, const std::string& pydir, const std::string& self) {
    static const char* code =
        "import sys\n"
        "d = sys.argv[1]\n"
        "if d: sys.path.insert(0, d)\n"
        "try:\n"
        "    from layover._mcp_server import main\n"
        "except ImportError as e:\n"
        "    b = sys.argv[3].rsplit('/', 1)[0]\n"
        "    sys.stderr.write('layover mcp: the layover Python package was not found (%s) in %s/../python, '\n"
        "        '%s/../lib/layover/python or the site-packages of %s (run with -I: no PYTHONPATH, no user site); '\n"
        "        'run make install, which installs it there\\n' % (e, b, b, sys.executable))\n"
        "    sys.exit(1)\n"
        "sys.exit(main(sys.argv[2:]))\n";
    return {python, "-I", "-c", code, pydir, "--binary", self};
}

}  // namespace mcp

int cmd_mcp(int argc, char** argv) {
    for (int i = 1; i < argc; i++)
        if (!std::strcmp(argv[i], "-h") || !std::strcmp(argv[i], "--help")) {
            std::fputs(mcp::kUsage, stdout);
            return 0;
        }
    std::string self = base::self_exe();
    if (self.empty()) {
        std::fprintf(stderr, "layover: mcp: cannot find own binary (/proc not mounted?)\n");
        return 1;
    }
    std::string dir = base::dir_of(self);
    std::string pydir;
    for (const auto& cand : mcp::python_dirs(dir)) {
        if (::access((cand + "/layover/_mcp_server.py").c_str(), R_OK) == 0) {
            pydir = cand;
            break;
        }
    }
    std::string python = ::access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
    std::vector<std::string> args = mcp::python_argv(python, pydir, self);
    for (int i = 1; i < argc; i++) args.push_back(argv[i]);
    std::vector<char*> cargv;
    for (auto& a : args) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    ::execvp(cargv[0], cargv.data());
    std::fprintf(stderr, "layover: mcp: cannot run %s: %s; install python3 (>= 3.8)\n", python.c_str(),
                 std::strerror(errno));
    return 1;
}
