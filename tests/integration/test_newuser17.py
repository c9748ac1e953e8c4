"""Three new users (newuser17), from README.md and docs/ alone: a Python
agent author, someone wiring `layover mcp` into a client, a person at a
terminal. What tripped them, each test failing before its fix; checked on
the real filesystem afterwards."""
import os
from pathlib import Path

from mcp_util import client, proj, text  # noqa: F401 (fixtures)

ROOT = Path(os.environ.get("LAYOVER_SOURCE_ROOT") or Path(__file__).resolve().parents[2])


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


def test_mcp_the_review_line_docs_mcp_md_shows_is_the_one_the_server_prints(client, proj):
    # Before: docs/mcp.md drew the server's closing line as two lines, with
    # nothing saying they are one; the server prints one.
    block = (ROOT / "docs/mcp.md").read_text().split("## Reviewing what the agent did")[1].split("```")[1]
    shown = [ln for ln in block.strip().splitlines()]
    assert len(shown) == 2 and shown[0].endswith(": \\"), shown
    doc = (shown[0][:-2] + " " + shown[1]).replace("mcp-20260115-101500", "nu17-review")
    c = client(session="nu17-review")
    assert not c.call("write_file", path="new.txt", content="x\n")["isError"]
    assert c.close() == 0
    assert doc in c.stderr().splitlines(), c.stderr()
    assert not (proj / "new.txt").exists()


def test_mcp_edit_file_with_old_string_equal_to_new_string_says_nothing_would_change(client, proj):
    # Before: "replaced 1 occurrence in README.md", and the file was written
    # back as it was: the model took it for an edit made.
    c = client()
    r = c.call("edit_file", path="README.md", old_string="# demo", new_string="# demo")
    assert r["isError"]
    assert text(r).splitlines()[0] == ("edit_file: old_string and new_string are the same, so README.md would not "
                                       "change; give the new text in new_string"), text(r)
    assert c.call("changes")["structuredContent"]["changes"] == []
    assert (proj / "README.md").read_text() == "# demo\n"
