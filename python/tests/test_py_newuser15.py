"""A new user (newuser15) driving `layover mcp` and the Python examples of
docs/python.md. Each test fails before its fix."""
from __future__ import annotations

import re
import threading

import pytest

from layover import PatchError
from layover._helper import Helper
from .layover_testutil import tree


def test_a_streamed_helper_verb_leaves_no_traceback_of_its_stderr_reader(tmp_path):
    # Before: _stream closed the helper's stderr (leaving `with p`) before
    # joining the thread reading it, which then raised "ValueError: I/O
    # operation on closed file"; Python printed "Exception in thread ...
    # (drain)" and its traceback on the MCP server's log (the `diff` tool
    # with paths) and on a Python user's terminal (sb.diff()), about one call
    # in fifty.
    fake = tmp_path / "layover"
    fake.write_text("#!/bin/sh\necho some-diff\necho 'layover: diff: the line the caller must see' >&2\nexit 2\n")
    fake.chmod(0o755)
    helper = Helper(binary=str(fake), state_dir=tmp_path)
    raised = []
    old, threading.excepthook = threading.excepthook, lambda a: raised.append(a.exc_value)
    try:
        for _ in range(400):
            with pytest.raises(PatchError, match="the line the caller must see"):
                helper.run_clipped(["diff", "s"], 1000, ok=(0, 1))
            with pytest.raises(PatchError, match="the line the caller must see"):
                helper.run_capped(["diff", "s"], 1000, ok=(0, 1))
    finally:
        threading.excepthook = old
    assert raised == []


def test_the_checkpoint_tool_says_each_writing_call_already_ends_a_step():
    # Before: an agent that wrote a file, then called checkpoint to label it,
    # got "no changes since the last step: no step made" and its label was
    # dropped: write_file had ended the step, which no description said.
    from layover._mcp_schema import tool_list
    tools = {t["name"]: t for t in tool_list("loopback")}
    d = tools["checkpoint"]["description"]
    assert "run_command, write_file and edit_file each end a step of their own" in d
    assert "start_command" in d  # what a checkpoint is for: a background job's writes
    for name in ("run_command", "write_file", "edit_file"):
        assert "ends a step" in tools[name]["description"], name


def test_diff_of_a_path_that_matches_no_change_warns_as_apply_does(sb):
    # Before: sb.diff(paths=["src/ap.py"]) returned "" without a word (the
    # helper's "matches no change" line was dropped), while apply(paths=)
    # warned; the MCP diff tool said "no changes".
    sb.exec(["sh", "-c", "echo v2 > src/app.py"])
    with pytest.warns(UserWarning, match=r"^layover: diff: 'src/ap\.py' matches no change \(paths are relative "
                                         r"to the target ") as w:
        assert sb.diff(paths=["src/ap.py"]) == ""
    assert w[0].filename == __file__  # the caller's line, as apply()'s warning
    with pytest.warns(UserWarning, match="'nope.txt' matches no change"):
        assert "+v2" in sb.diff(paths=["src/app.py", "nope.txt"])


def test_the_example_agent_runs_on_a_tree_of_ones_own_as_docs_python_md_says(require_sandbox, state_dir, tmp_path,
                                                                            capsys):
    # docs/python.md: "--target DIR works on your tree". Before: on a tree
    # with no README.md (or one not starting "# demo") the scripted agent's
    # read_file raised, and the demo died with a ToolError traceback and no
    # review. A tool's error is now shown to the agent's log, as an agent's
    # loop would show it to its model, and the loop goes on.
    from .test_py_mixin import load_example
    demo = load_example()
    project = tmp_path / "mine"
    project.mkdir()
    (project / "main.c").write_text("int main(void) { return 0; }\n")
    before = tree(project)
    assert demo.main(["--target", str(project), "--state-dir", str(state_dir), "--review", "keep"]) == 0
    out = capsys.readouterr().out
    assert tree(project) == before
    assert re.search(r"^agent: read_file\('README.md',\) failed: FileNotFoundError: .*README\.md", out, re.M), out
    assert re.search(r"^agent: delete_file\('old.txt',\) failed: FileNotFoundError", out, re.M), out
    assert "+- ship the demo" in out and "review later with: layover diff py-" in out


def test_every_tool_argument_has_a_description_for_the_model():
    # Before: start_command's cwd, read_output's wait, list_directory's path,
    # diff's paths, rollback's step... had only a type: whether a path is
    # relative to the target, or what the default is, was left to guess.
    from layover._mcp_schema import tool_list
    bare = ["%s.%s" % (t["name"], k) for t in tool_list("loopback")
            for k, v in t["inputSchema"]["properties"].items() if not v.get("description")]
    assert bare == []
