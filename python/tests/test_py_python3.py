"""A demanding Python agent author's and MCP user's leftovers (python3):
argument errors, exit() in the REPL, call() results, session sizes, forged
MCP listings. Each test fails before its fix."""
from __future__ import annotations

import json
from types import SimpleNamespace

from layover import _mcp_tools
from layover._mcp_reply import bounded


def _tool(name, reply, **args):
    """An MCP tool's (text, structuredContent, isError) for an agent reply,
    bounded as the server bounds each (_mcp_server.py)."""
    ctx = SimpleNamespace(agent=lambda op, a: bounded(dict(reply, id=7, ok=True)))
    return getattr(_mcp_tools, name)(ctx, args)


def test_mcp_a_forged_or_long_listing_stays_bounded_and_says_what_it_left_out():
    # Before: 1,000 entries of 44,000 characters each, as a command inside
    # can forge them on the agent's channel, went whole into structuredContent
    # (44 MB); 500 such matches as well. Only the text was clipped.
    for n, size in ((1000, 44000), (1000, 400)):
        entries = [{"path": "d/%04d-" % i + "x" * size, "type": "file", "size": 1} for i in range(n)]
        text, s, err = _tool("list_directory", {"path": ".", "entries": entries, "truncated": False})
        assert len(json.dumps(s)) <= _mcp_tools.LIST_BUDGET + 1000 and len(text) <= _mcp_tools.TEXT_CAP + 200, size
        kept = len(s["entries"])
        assert kept < n and s["truncated"] and s["entries"] == entries[:kept], size
        assert ("\n" + text).endswith("\n[... %d more entries left out: the reply passed 40000 characters; list a "
                             "subdirectory, or lower depth]" % (n - kept)), text[-300:]
    matches = ["f%03d.txt:1:" % i + "y" * 44000 for i in range(500)]
    text, s, err = _tool("search_files", {"matches": matches, "files_searched": 500, "truncated": False},
                         pattern="y")
    assert len(json.dumps(s)) <= _mcp_tools.LIST_BUDGET + 1000 and s["matches"] == [] and s["truncated"], s
    assert ("\n" + text).endswith("\n[... 500 more matches left out: the reply passed 40000 characters; narrow the "
                         "pattern, path or glob]"), text[-300:]
    # A listing that fits is whole, as before.
    entries = [{"path": "f%d" % i, "type": "file", "size": i} for i in range(100)]
    text, s, err = _tool("list_directory", {"path": ".", "entries": entries, "truncated": False})
    assert s == {"path": ".", "entries": entries, "truncated": False} and "left out" not in text


def test_argument_errors_are_valueerror_or_typeerror_naming_the_argument(sb, state_dir, target):
    # Before: fork("bad name") and fork("") were SandboxErrors in the CLI's
    # words; fork(5), save(5), diff([5]), apply(exclude=[5]) the "expected str,
    # bytes or os.PathLike object, not int" of a call deep inside; save("")
    # a PatchError naming "-o FILE"; max_output="x" was taken (each call then
    # failed); max_size="lots" named "--max-size" and 'layover run --help'.
    import pytest
    from layover import Sandbox, SandboxError, apply_patch, show_patch

    for call, kind, message in (
            (lambda: sb.fork("bad name"), ValueError,
             "name must be 1-64 of A-Z a-z 0-9 . _ -, not starting with -, not 'bad name'"),
            (lambda: sb.fork(""), ValueError, "name must be 1-64 of A-Z a-z 0-9 . _ -, not starting with -, not ''"),
            (lambda: sb.fork(5), TypeError, "name must be a session name (a str), not int 5"),
            (lambda: Sandbox.resume("a b", state_dir=state_dir), ValueError,
             "name must be 1-64 of A-Z a-z 0-9 . _ -, not starting with -, not 'a b'"),
            (lambda: sb.save(5), TypeError, "path must be a str, bytes or os.PathLike, not int 5"),
            (lambda: sb.save(""), ValueError,
             "layover: save(): path is empty; pass the file to write, e.g. 'work.tar.zst'"),
            (lambda: sb.diff([5]), TypeError, "paths must be a str, bytes or os.PathLike, not int 5"),
            (lambda: sb.apply(exclude=[5]), TypeError,
             "exclude takes globs (str), e.g. exclude=['*.log'], not int 5"),
            (lambda: sb.apply(target=5), TypeError,
             "target must be a str, bytes or os.PathLike, not int 5"),
            (lambda: apply_patch(5), TypeError, "path must be a str, bytes or os.PathLike, not int 5"),
            (lambda: show_patch(None), TypeError, "path must be a str, bytes or os.PathLike, not NoneType None"),
            (lambda: Sandbox(str(target), start=False, max_output="x"), TypeError,
             "max_output must be a number of bytes (an int), not str 'x'"),
            (lambda: Sandbox(str(target), start=False, max_output=0), ValueError,
             "max_output must be more than 0, not 0"),
            (lambda: Sandbox(str(target), start=False, startup_timeout="x"), TypeError,
             "startup_timeout must be a number of seconds, not str 'x'"),
            (lambda: Sandbox(str(target), start=False, python=5), TypeError,
             "python must be a path (a str) or None, not int 5"),
            (lambda: Sandbox(str(target), start=False, max_pids="x"), TypeError, "max_pids must be an int or None, "
             "not str 'x'"),
            (lambda: Sandbox(str(target), start=False, env_keep=[5]), TypeError,
             "env_keep takes globs of variable names (str), not int 5"),
            (lambda: Sandbox(str(target), start=False, hide=[5]), TypeError,
             "a hide path must be a str, bytes or os.PathLike, not int 5"),
            (lambda: sb.apply(paths=[b"ok", 5]), TypeError, "paths must be a str, bytes or os.PathLike, not int 5"),
            (lambda: sb.apply(paths=5), TypeError, "paths takes a list of paths, not int 5"),
            (lambda: __import__("layover").list_sessions(state_dir=5), TypeError,
             "state_dir must be a str, bytes or os.PathLike, not int 5"),
            (lambda: Sandbox(str(target), start=False, helper_env=5), TypeError,
             "helper_env must be a mapping of variable names to values, not int"),
            (lambda: Sandbox("", start=False), ValueError,
             "layover: target is empty; pass an existing tree (default: your home, '~')"),
            (lambda: Sandbox(str(target), state_dir=state_dir, max_size="lots"), ValueError,
             "layover: bad max_size='lots'; use e.g. 500M or 2G (at least 1M), or none"),
            (lambda: Sandbox(str(target), state_dir=state_dir, timeout="forever"), ValueError,
             "layover: bad timeout='forever'; use e.g. 90s, 5m, 2h, 1d or none")):
        with pytest.raises(kind) as e:
            call()
        assert str(e.value) == message and not isinstance(e.value, SandboxError), (str(e.value), message)
    # A bad option for the fork is refused before the fork is made (it was made, then the TypeError raised).
    with pytest.raises(TypeError, match="unexpected keyword argument 'netwrok'"):
        sb.fork("f1", netwrok="host")
    with pytest.raises(ValueError, match=r"^network must be one of"):
        sb.fork("f1", network="all")
    assert sb.running and sb.run("1").value == "1"  # nothing was done to it
    assert [s.name for s in __import__("layover").list_sessions(state_dir=state_dir)] == [sb.name]


def test_exit_and_quit_end_the_code_and_say_the_repl_lives_on(sb):
    # Before: exit() and quit() were a NameError (the REPL runs python -S, so
    # site.py's builtins are missing), and sys.exit(0) an error.
    note = "layover: exit() ended this code; the sandbox's REPL and its names live on " \
           "(Sandbox.close() on the host stops it)\n"
    r = sb.run("x = 1\nprint('before')\nexit()\nprint('after')")
    assert (r.stdout, r.stderr, r.error, r.ok) == ("before\n", note, None, True), r
    r = sb.run("quit(3)")
    assert r.stderr == note.replace("exit()", "quit()") and r.error.endswith("SystemExit: 3\n"), r
    assert sb.run("import sys; sys.exit(0)").ok and not sb.run("import sys; sys.exit('failed')").ok
    assert sb.run("exit").value.startswith("exit() ends the code it is called in, as sys.exit() does")
    assert sb.running and sb.run("x").value == "1"


def test_call_results_that_cannot_come_back_say_why_and_the_repl_lives_on(make_sandbox):
    # Before: "TypeError: object of type generator is not JSON serializable",
    # a RecursionError "in __instancecheck__" at ~330 levels, KeyError: 'g'
    # for a function the source lacks, and a result past max_output stopped
    # the sandbox after sending it all.
    import pytest
    from layover import ToolError

    sb = make_sandbox(max_output=8 << 20)
    for src, message in (
            ("def f(): return (i for i in range(3))",
             "layover: tool f returned a value JSON cannot carry (generator: object of type generator is not JSON "
             "serializable); return list(...) of it; return lists, dicts with str keys, str, int, finite float, bool "
             "or None\n"),
            ("def f():\n a = []\n a.append(a)\n return a",
             "layover: tool f returned a value JSON cannot carry (list: it is nested deeper than 500 lists and dicts, "
             "or holds itself); return lists, dicts with str keys, str, int, finite float, bool or None\n"),
            ("def f(): return 'x' * (9 << 20)",
             "layover: tool f returned more bytes of JSON than call()'s limit of %d (max_output); return less, or "
             "write it to a file and read it with changed_files()\n" % ((8 << 20) - 65536 - 128 * 9)),
            ("def g(): return 1", "NameError: the tool's source defines no function 'f'\n")):
        with pytest.raises(ToolError) as e:
            sb.call(src, "f")
        assert str(e.value).endswith(message), (str(e.value), message)
    deep = sb.call("def f():\n a = []\n for i in range(499): a = [a]\n return a", "f")
    for _ in range(499):
        deep = deep[0]
    assert deep == []
    with pytest.raises(TypeError, match=r"^call\(\): name must be the name of a function the source defines, not 5$"):
        sb.call("def f(): return 1", 5)
    with pytest.raises(TypeError, match=r"^call\(\): args, kwargs and self_attrs travel as JSON: Object of type set"):
        sb.call("def f(x): return 1", "f", [{1}])
    assert sb.running and sb.call("def f(): return [1, 'a', None]", "f") == [1, "a", None]


def test_session_info_says_all_its_bytes_not_only_the_live_layers(make_sandbox):
    # Before: SessionInfo had only upper_bytes, the live upper layer's: 0
    # after a resume (start() after close() froze the run as a step) though
    # the session held the file; `layover sessions --json`'s bytes was dropped.
    sb = make_sandbox()
    sb.run("open('a.bin', 'wb').write(b'x' * 100000)")
    live = sb.info()
    assert live.upper_bytes >= 100000 and live.bytes >= 100000 and live.steps == 0, live
    sb.close()
    sb.start()
    resumed = sb.info()
    assert resumed.upper_bytes == 0 and resumed.bytes >= 100000 and resumed.steps == 1, resumed
    assert [c.path for c in sb.changes()] == ["a.bin"]


def test_a_call_whose_result_takes_long_to_send_is_interrupted_at_its_timeout(sb):
    # Before: the value's JSON was made with interrupts dropped, so a call
    # past its timeout there (a large value takes seconds; here a dict whose
    # items() is slow stands for one) was not interrupted: the sandbox was
    # stopped 5 s later, its REPL and names lost.
    import pytest
    from layover import TimeoutError

    slow = "import time\nclass D(dict):\n    def items(self):\n        time.sleep(60)\n        return []\n" \
           "def f():\n    return D(a=1)\n"
    sb.run("kept = 42")
    with pytest.raises(TimeoutError) as e:
        sb.call(slow, "f", timeout=0.5)
    assert not e.value.stopped and sb.running, str(e.value)
    assert sb.run("kept").value == "42"
