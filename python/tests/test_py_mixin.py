"""SandboxMixin: the example agent's tools run inside the sandbox and its
work ends up in the patch, not in the real tree."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from layover import SandboxError, SandboxMixin, ToolError, show_patch
from layover.mixin import tool_source
from .layover_testutil import tree

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "agent_demo.py"


def load_example():
    spec = importlib.util.spec_from_file_location("agent_demo", str(EXAMPLE))
    mod = importlib.util.module_from_spec(spec)
    sys.modules["agent_demo"] = mod
    spec.loader.exec_module(mod)
    return mod


def test_example_agent_ends_with_expected_files_in_the_patch(require_sandbox, state_dir, tmp_path, capsys):
    demo = load_example()
    project = tmp_path / "project"
    project.mkdir()
    (project / "README.md").write_text("# demo\n\nA scratch project.\n")
    (project / "old.txt").write_text("obsolete\n")
    before = tree(project)
    patch = tmp_path / "agent.tar.zst"
    assert demo.main(["--target", str(project), "--state-dir", str(state_dir), "--save", str(patch),
                      "--review", "keep"]) == 0
    assert tree(project) == before  # the agent never touched the real tree
    changes = {c.path: c.kind for c in show_patch(patch)}
    assert changes == {"notes": "added", "notes/todo.md": "added", "README.md": "modified",
                       "old.txt": "deleted", "build.log": "added"}
    out = capsys.readouterr().out
    assert "+# demo (edited by the agent)" in out


def test_example_agent_removes_its_scratch_project_and_session(require_sandbox, state_dir, tmp_path, monkeypatch,
                                                                capsys):
    import tempfile
    demo = load_example()
    scratch_parent = tmp_path / "tmp"
    scratch_parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch_parent))
    assert demo.main(["--state-dir", str(state_dir), "--review", "keep"]) == 0
    assert list(scratch_parent.iterdir()) == []  # no layover-demo-* left behind
    assert not (state_dir / "sessions").exists() or list((state_dir / "sessions").iterdir()) == []
    assert "+# demo (edited by the agent)" in capsys.readouterr().out


def test_tool_errors_come_back_as_tool_error_and_host_state_is_not_shared(require_sandbox, state_dir,
                                                                           target, capsys):
    class Agent(SandboxMixin):
        sandboxed_tools = ("where", "fail")
        sandbox_review_after = ("loop",)

        def __init__(self):
            self.sandbox_options = {"target": str(target), "state_dir": str(state_dir)}
            self.label = "agent-1"
            self.reviewed = 0

        def where(self):
            import os
            return [os.getpid() < 50, self.label]  # pid namespace: a low pid

        def fail(self):
            raise RuntimeError("tool broke")

        def loop(self):
            return self.where()

    a = Agent()
    assert a.loop() == [True, "agent-1"]
    assert not a.sandbox.running  # the loop's end stopped (and, on a tty, reviewed) it
    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # kept, and stderr says where (newuser15)
        n = a.sandbox.name
        assert capsys.readouterr().err.endswith(
            "layover: session '%s' kept: 'layover status %s' lists its changes, 'layover apply %s' applies them, "
            "'layover discard %s' drops them\n" % (n, n, n, n))
    with pytest.raises(ToolError) as e:
        a.fail()
    assert "RuntimeError: tool broke" in str(e.value)
    a.sandbox.close()


def test_tool_source_drops_decorators_and_refuses_closures():
    def deco(f):
        return f

    @deco
    def plain(x):
        return x + 1

    assert tool_source(plain).startswith("def plain(x):")
    y = 3

    def closure():
        return y

    with pytest.raises(SandboxError):
        tool_source(closure)


def test_a_tool_error_never_carries_escapes_from_inside_to_the_terminal(require_sandbox, state_dir, target):
    """Found by the attack pass of 27 Nov: ToolError's message was the
    traceback from inside as it came, and code inside chooses its text (the
    REPL is the agent's own process); uncaught, Python printed it raw on the
    author's terminal: an OSC 52 set the host's clipboard, a CSI redrew the
    screen. Now each control, C1 or bidi character is its escape; the raw
    text stays in ``traceback``."""
    from layover import Sandbox
    evil = "\x1b]52;c;Y3VybCBldmlsIHwgc2g=\x07\x1b[2J\u202e\x9b\rok"
    with Sandbox(target, state_dir=state_dir) as sb:
        with pytest.raises(ToolError) as e:
            sb.call("def f(s):\n    raise RuntimeError(s)\n", "f", [evil])
        sb.discard()
    msg = str(e.value)
    assert "RuntimeError: \\x1b]52;c;Y3VybCBldmlsIHwgc2g=\\x07\\x1b[2J\\u202e\\x9b\\x0dok" in msg
    assert all(c.isprintable() or c in "\n\t" for c in msg)
    assert "Traceback" in msg and "\n" in msg  # still a traceback to read
    assert evil in e.value.traceback
