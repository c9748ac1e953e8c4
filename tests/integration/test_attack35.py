"""A hostile MCP client of `layover mcp`, and hostile code inside the
sandbox the Python bindings drive (attack35). Each test fails before its
fix."""
import json

import pytest

from mcp_util import client, proj, text  # noqa: F401 (fixtures)
from test_mcp_server import _cpu, _peak_rss_kb


def test_mcp_an_unknown_tool_of_a_huge_name_is_refused_in_linear_time(client):
    # Before: the "did you mean" of an unknown tool ran difflib over the whole
    # name: 8 MiB of it cost the server 12 s of CPU and 340 MB, on the thread
    # that reads every message (a ping waited behind it); 32 MiB (a line's
    # limit) ~50 s and ~1.3 GB. The name is cut to 100 characters first, as an
    # unknown argument's is.
    c = client(session="mcp-bigname")
    before = _cpu(c.proc.pid)
    rid = c.start("tools/call", {"name": "wrte_file" + "x" * (8 << 20), "arguments": {}})
    r = c.response(rid)
    assert r["error"]["code"] == -32602, r["error"]
    assert r["error"]["message"].startswith("Invalid params: unknown tool 'wrte_filexxx"), r["error"]["message"][:200]
    assert len(r["error"]["message"]) < 300
    assert "result" in c.request("ping")
    spent = _cpu(c.proc.pid) - before
    assert spent < 3, spent
    assert _peak_rss_kb(c.proc.pid) < 200 * 1024


def test_mcp_a_long_line_read_in_pipe_sized_pieces_costs_linear_time(client):
    # Before: the reader grew a bytes object by each read (64 KiB from a pipe)
    # and searched all of it for the newline again: a 24 MiB line (write_file
    # of a 24 MiB file) cost the server ~50 s of CPU before it was handled,
    # quadratic in the line's length, every other message waiting.
    c = client(session="mcp-longline")
    before = _cpu(c.proc.pid)
    pad = "x" * (24 << 20)
    c.send_raw(json.dumps({"jsonrpc": "2.0", "id": "long", "method": "ping", "params": {"pad": pad}}).encode()
               + b"\n")
    assert c.response("long")["result"] == {}
    spent = _cpu(c.proc.pid) - before
    assert spent < 5, spent


# Run inside the sandbox by exec(): takes its parent's (the REPL's) sockets by
# pidfd_getfd and writes the reply to request argv[1] on each (only the reply
# socket takes it): a failed exec whose message and path hold terminal
# controls (a title, a screen clear, a right-to-left override, a new line).
FORGE_EXEC_ERROR = r"""
import ctypes, json, os, socket, stat, sys
libc = ctypes.CDLL(None, use_errno=True)
rid, repl = int(sys.argv[1]), os.getppid()
text = "No such file\x1b]0;owned\x07\u202eelif\nlayover: all changes applied".encode()
h = json.dumps({"t": "done", "id": rid, "lens": [len(text)], "tail": [0, 0], "oserror": 2, "returncode": None,
                "filename": "prog\x1b[2J\x1b[H\u202etxt.exe"}).encode()
frame = len(h).to_bytes(4, "big") + len(text).to_bytes(4, "big") + h + text
pidfd = os.pidfd_open(repl)
for name in os.listdir("/proc/%d/fd" % repl):
    fd = libc.syscall(438, pidfd, int(name), 0)  # pidfd_getfd
    if fd < 0:
        continue
    try:
        if stat.S_ISSOCK(os.fstat(fd).st_mode):
            os.write(fd, frame)
    except OSError:
        pass
    os.close(fd)
"""


def test_a_forged_exec_failure_reaches_the_host_as_one_inert_line(require_sandbox, state_dir, home):
    # Before: the text and path of exec()'s OSError, which the REPL sends,
    # went into the exception's message as they came: ESC sequences (a
    # window title, a cleared screen), bidi overrides and a forged second
    # line reached the terminal of whoever printed the error or its
    # traceback. Now written as their escapes, on one line, as ToolError's.
    from layover import Sandbox
    from layover.errors import SandboxError
    with Sandbox(home, session="py35x", state_dir=state_dir) as sb:
        sb.run("1")
        rid = sb._repl.client.next_id
        with pytest.raises(SandboxError) as e:
            sb.exec(["python3", "-c", FORGE_EXEC_ERROR, str(rid)])
        assert isinstance(e.value, FileNotFoundError)
        msg = str(e.value)
        assert msg.startswith("layover: exec inside the sandbox: prog\\x1b[2J\\x1b[H\\u202etxt.exe: No such file"
                              "\\x1b]0;owned\\x07\\u202eelif\\x0alayover: all changes applied (ENOENT); "), msg
        assert all(c.isprintable() for c in msg), msg


def test_a_step_label_no_argv_can_carry_never_replaces_what_exec_raised(require_sandbox, state_dir, home):
    # Before: with steps=True, exec() of a word holding a lone surrogate
    # raised the step's UnicodeEncodeError (its label could not be an argv
    # word of `layover checkpoint -m`) in place of exec()'s own error, and
    # the step was neither made nor deferred. Now the label holds the
    # character's escape, and the step is made.
    from layover import Sandbox
    from layover.errors import SandboxError
    with Sandbox(home, session="py35s", state_dir=state_dir, steps=True) as sb:
        sb.run("open('made.txt', 'w').write('x')")
        with pytest.raises(SandboxError) as e:
            sb.exec(["/bin/echo", "a\ud800b"])
        assert "exec inside the sandbox" in str(e.value), e.value
        assert sb.exec(["/bin/sh", "-c", "echo y > made2.txt"]).returncode == 0
        labels = [s.label for s in sb.log() if s.step is not None]
        assert labels[0] == "exec: /bin/sh -c echo y > made2.txt", labels
        assert sb.deferred_steps == ()
    assert not (home / "made.txt").exists()


def test_mcp_a_message_of_millions_of_small_values_is_refused_before_it_is_parsed(client):
    # Before: a 10 MiB line of `[],` (3.5 million empty lists) was parsed
    # whole, a Python object per 3 bytes and the cyclic GC walking them: ~300
    # MB and ~20 s of the server's CPU on the thread that reads every message
    # (30 MiB, under the line's limit: 850 MB, ~1 min). Counted first now, as
    # a reply from inside is (one line: no id to answer with).
    c = client(session="mcp-values")
    before = _cpu(c.proc.pid)
    c.send_raw(b'{"jsonrpc":"2.0","id":"many","method":"ping","params":{"x":[' + b"[]," * (3500 << 10) + b"[]]}}\n")
    r = c.wait_for(lambda m: "error" in m)
    assert r["id"] is None and r["error"]["code"] == -32600, r
    assert r["error"]["message"] == ("Invalid Request: a message of more than 1048576 JSON values or 65536 arrays "
                                     "and objects; send less in one message"), r
    assert "result" in c.request("ping")
    assert _cpu(c.proc.pid) - before < 5
    assert _peak_rss_kb(c.proc.pid) < 200 * 1024
    # Strings holding brackets and commas are one value each: a file of them is written whole.
    body = "[{a, b}], " * 200000
    r = c.call("write_file", path="brackets.txt", content=body)
    assert not r["isError"], r
    assert r["structuredContent"]["bytes_written"] == len(body)
    assert "1\t[{a, b}], [{a, b}]" in c.call("read_file", path="brackets.txt", limit=1)["structuredContent"]["content"]


def test_mcp_changes_lists_a_name_holding_a_newline_on_its_own_line(client, proj):
    # Before: the `changes` text put each path as it came: a file the agent
    # named "x\nD  README.md" showed as two lines, a deletion of README.md
    # that never happened among them. Now the name's controls are escapes.
    c = client(session="mcp-nlname")
    assert not c.call("write_file", path="x\nD  README.md\u202e", content="1\n")["isError"]
    r = c.call("changes")
    lines = text(r).splitlines()
    assert "A  x\\x0aD  README.md\\u202e" in lines, lines
    assert not any(ln.startswith("D ") for ln in lines), lines
    assert r["structuredContent"]["changes"][0]["path"] == "x\nD  README.md\u202e"
    assert (proj / "README.md").read_text() == "# demo\n"
