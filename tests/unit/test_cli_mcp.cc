// `layover mcp`: where the Python server is looked for, and how it is run.
#include <catch2/catch.hpp>

#include "helper/base/self_exe.h"
#include "helper/cli/mcp/mcp_find.h"

TEST_CASE("mcp looks for the package in the checkout, then the installed layout", "[mcp]") {
    auto dirs = mcp::python_dirs("/src/layover/build");
    REQUIRE(dirs.size() == 2);
    CHECK(dirs[0] == "/src/layover/build/../python");
    CHECK(dirs[1] == "/src/layover/build/../lib/layover/python");
}

TEST_CASE("mcp runs python isolated, with the package dir and its own binary", "[mcp]") {
    auto argv = mcp::python_argv("/usr/bin/python3", "/opt/x/python", "/opt/x/bin/layover");
    REQUIRE(argv.size() == 7);
    CHECK(argv[0] == "/usr/bin/python3");
    CHECK(argv[1] == "-I");  // no PYTHONPATH, no user site, no cwd on sys.path
    CHECK(argv[2] == "-c");
    CHECK(argv[3].find("from layover._mcp_server import main") != std::string::npos);
    CHECK(argv[4] == "/opt/x/python");
    CHECK(argv[5] == "--binary");
    CHECK(argv[6] == "/opt/x/bin/layover");
    CHECK(mcp::python_argv("python3", "", "/b")[4].empty());  // installed: the interpreter's own path
}

TEST_CASE("dir_of takes a path's directory part", "[mcp]") {
    CHECK(base::dir_of("/a/b/layover") == "/a/b");
    CHECK(base::dir_of("/layover") == "/");
    CHECK(base::dir_of("layover") == ".");
    CHECK(base::self_exe().find('/') == 0);  // /proc is mounted where the tests run
}
