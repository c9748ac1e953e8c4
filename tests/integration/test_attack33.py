"""A hostile MCP client of `layover mcp` (attack33). Each test fails before
its fix."""
from mcp_util import client, proj, text  # noqa: F401 (fixtures)


def test_mcp_diff_of_paths_too_long_for_the_kernel_says_so_not_reinstall(client, proj):
    # Before: "diff: layover: cannot run the helper .../layover: Argument list
    # too long (E2BIG); set LAYOVER_BIN or reinstall": the model was told to
    # reinstall what works.
    c = client()
    assert not c.call("write_file", path="src/app.py", content="v2\n")["isError"]
    for paths in (["x" * 200000], ["p%08d" % i for i in range(300000)]):
        r = c.call("diff", paths=paths)
        assert r["isError"]
        assert text(r).startswith("diff: layover: the arguments of 'layover diff' are too long for the kernel "
                                  "(E2BIG: "), text(r)[:300]
        assert "reinstall" not in text(r)
    assert "+v2" in text(c.call("diff", paths=["src/app.py"]))
    assert (proj / "src" / "app.py").read_text() == "print('v1')\nprint('v1 again')\n"

