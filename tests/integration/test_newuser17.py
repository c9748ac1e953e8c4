"""Three new users (newuser17), from README.md and docs/ alone: a Python
agent author, someone wiring `layover mcp` into a client, a person at a
terminal. What tripped them, each test failing before its fix; checked on
the real filesystem afterwards."""
from mcp_util import client, proj, text  # noqa: F401 (fixtures)


def test_mcp_run_command_in_a_cwd_that_is_not_there_says_so_and_names_the_tool_that_shows_what_is(client, proj):
    # Before: "run_command: cwd sub: not a directory" for a directory that
    # does not exist, with no fix; the model made it a file question.
    c = client()
    for name, args in (("run_command", {"command": "pwd"}), ("start_command", {"command": "pwd"})):
        r = c.call(name, cwd="nodir", **args)
        assert r["isError"], name
        assert text(r).splitlines()[0] == (
            "%s: cwd nodir: no such file or directory; list_directory shows what is there (paths are relative "
            "to the target, %s)" % (name, proj)), text(r)
        r = c.call(name, cwd="README.md", **args)
        assert r["isError"]
        assert text(r).splitlines()[0] == "%s: cwd README.md: not a directory" % name, text(r)
    assert not (proj / "nodir").exists()
    assert sorted(p.name for p in proj.iterdir()) == ["README.md", "data.bin", "src"]
