// Where `layover mcp` finds the Python package that serves MCP (pure logic;
// the verb checks which candidate exists).
#pragma once

#include <string>
#include <vector>

namespace mcp {

// Directories that may hold layover/_mcp_server.py, best first, for a binary
// in exe_dir: the source checkout's python/ beside build/, then an installed
// PREFIX/lib/layover/python. None found: the interpreter's own path (the
// site-packages `make install` writes).
std::vector<std::string> python_dirs(const std::string& exe_dir);

// The interpreter's argv (without the verb's own arguments): python -I (no
// PYTHON* variables, no cwd on sys.path) runs the server's main() with
// pydir ("" for none) put first on sys.path and the helper's own path.
std::vector<std::string> python_argv(const std::string& python, const std::string& pydir, const std::string& self);

}  // namespace mcp
