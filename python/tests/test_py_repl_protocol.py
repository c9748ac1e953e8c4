"""The REPL's protocol, run directly on the host (no sandbox needed): the
limits host and server share, a hostile REPL writing to the sockets it
holds, the client's reading of any valid frame form, run()'s and exec()'s
hot paths and their fallbacks, the output cap, and the sources' Python 3.8
syntax.  Statement execution, capture, exec and interrupts: test_py_repl.py."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time

import pytest

from layover import SandboxError, TimeoutError
from layover import _boot, _client
from layover.repl import Repl, default_python, python_argv

from .layover_testutil import HOSTILE_SEND


def test_protocol_limits_match_between_host_and_server():
    src = _boot.server_source().decode()
    assert "MAX_HEADER = %d" % _client.MAX_HEADER in src.replace("64 * 1024", str(64 * 1024))
    assert "MAX_PAYLOAD = 1024 * 1024" in src and _client.MAX_PAYLOAD == 1024 * 1024


# --- a hostile REPL: user code writing to the sockets it holds ---

HOSTILE = {
    "garbage": "send(b'\\xff' * 64)",
    "oversized header": "send((10**9).to_bytes(4, 'big') + (0).to_bytes(4, 'big'))",
    "oversized payload": "send((2).to_bytes(4, 'big') + (2**31).to_bytes(4, 'big') + b'{}')",
    "bad json": "send((5).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + b'{{{{{')",
    "code as a type": ("h = b'{\"t\":\"__import__(\\'os\\').system(\\'touch %(marker)s\\')\",\"id\":1}'\n"
                       "send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)"),
    "bad lengths in done": ("h = b'{\"t\":\"done\",\"id\":1,\"lens\":[999999]}'\n"
                            "send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)"),
    "bad tail in done": ("h = b'{\"t\":\"done\",\"id\":1,\"lens\":[],\"tail\":[-5,5]}'\n"
                         "send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)"),
    "huge tail in done": ("h = b'{\"t\":\"done\",\"id\":1,\"lens\":[],\"tail\":[99999999999,0]}'\n"
                          "send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)"),
    "fast-form out of an unknown stream": ("h = b'{\"t\":\"out\",\"id\":1,\"s\":\"bogus\"}'\n"
                                           "send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)"),
    "fast-form done of another request": ("h = b'{\"t\":\"done\",\"id\":999999,\"lens\":[-1,-1],"
                                          "\"interrupted\":false}'\n"
                                          "send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)"),
    "half a frame then silence": "send((100).to_bytes(4, 'big'))\nimport time\ntime.sleep(3600)",
}


def test_inside_writes_reach_the_host_only_on_the_reply_socket(repl):
    # The IPC (requests) socket carries host -> REPL only: a write from
    # inside is refused, and the session goes on.
    r = repl.run("import os\n"
                 "try:\n"
                 "    os.write(int(os.environ['LAYOVER_IPC_FD']), b'\\xff' * 64)\n"
                 "except BrokenPipeError:\n"
                 "    print('refused')")
    assert (r.stdout, r.error) == ("refused\n", None)
    assert repl.run("6 * 7").value == "42"


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_frames_raise_sandbox_error_without_hang_or_host_code(repl, kind, tmp_path):
    marker = tmp_path / "pwned"
    code = HOSTILE_SEND + HOSTILE[kind] % {"marker": marker}
    t0 = time.monotonic()
    with pytest.raises(SandboxError):
        repl.run(code, timeout=2 if "silence" in kind else None)
    assert time.monotonic() - t0 < 15
    assert not marker.exists()
    assert repl.proc.poll() is not None  # the peer was stopped
    with pytest.raises(SandboxError):
        repl.run("1")


def _frame(header: bytes, payload: bytes = b"") -> bytes:
    return len(header).to_bytes(4, "big") + len(payload).to_bytes(4, "big") + header + payload


def test_client_reads_replies_in_any_valid_json_form_and_split_frames():
    host, peer = _client.socketpair()
    client = _client.ReplClient(host, None, lambda: None, lambda reason: None)
    try:
        # 1: the REPL's own header forms, in one read (the hot path).
        peer.sendall(_frame(b'{"t":"out","id":1,"s":"stdout"}', b"2\n")
                     + _frame(b'{"t":"done","id":1,"lens":[-1,1],"interrupted":false}', b"2"))
        r = client.request({"t": "run"}, b"1+1")
        assert (r.data("stdout"), r.texts, r.done["interrupted"]) == (b"2\n", [None, "2"], False)
        # 2: other valid JSON (spaces, key order, more lens) goes through json.loads.
        peer.sendall(_frame(b'{ "s": "stderr", "id": 2, "t": "out" }', b"e")
                     + _frame(b'{"lens": [1, 2, -1], "t": "done", "id": 2, "interrupted": true}', b"abc"))
        r = client.request({"t": "run"}, b"x")
        assert (r.data("stderr"), r.texts, r.done["interrupted"]) == (b"e", ["a", "bc", None], True)
        # 3: a reply split over several reads, and output of an older request dropped.
        data = (_frame(b'{"t":"out","id":1,"s":"stdout"}', b"old")
                + _frame(b'{"t":"out","id":3,"s":"stdout"}', b"new")
                + _frame(b'{"t":"done","id":3,"lens":[-1,-1],"interrupted":false}'))
        t = threading.Thread(target=lambda: [peer.sendall(data[i:i + 7]) or time.sleep(0.001)
                                             for i in range(0, len(data), 7)])
        t.start()
        r = client.request({"t": "run"}, b"x")
        t.join()
        assert (r.data("stdout"), r.texts) == (b"new", [None, None])
        # 4: a done frame's tail joins the streams after the out frames,
        # in the REPL's own form and in any other JSON form.
        peer.sendall(_frame(b'{"t":"out","id":4,"s":"stdout"}', b"a")
                     + _frame(b'{"t":"done","id":4,"lens":[-1,1],"tail":[2,1],"interrupted":false}', b"2b\nc"))
        r = client.request({"t": "run"}, b"x")
        assert (r.data("stdout"), r.data("stderr"), r.texts) == (b"ab\n", b"c", [None, "2"])
        peer.sendall(_frame(b'{"tail": [0, 2], "lens": [], "t": "done", "id": 5, "ok": true}', b"ee"))
        r = client.request({"t": "call"}, b"x")
        assert (r.data("stdout"), r.data("stderr"), r.texts) == (b"", b"ee", [])
        # 5: lengths (lens + tail) that do not add up are refused.
        peer.sendall(_frame(b'{"t":"done","id":6,"lens":[-1,5],"interrupted":false}', b"2"))
        with pytest.raises(SandboxError, match="wrong length"):
            client.request({"t": "run"}, b"x")
    finally:
        peer.close()
        client.close()


@contextlib.contextmanager
def _live_client(**kw):
    """A ReplClient over a socketpair with a live child as its proc (so the
    hot paths take their one-read forms), the peer end, and the child."""
    child = subprocess.Popen(["sleep", "60"])
    host, peer = _client.socketpair()
    client = _client.ReplClient(host, None, lambda: None, lambda reason: None, proc=child, **kw)
    try:
        yield child, client, peer
    finally:
        peer.close()
        client.close()
        child.kill()
        child.wait()


def test_run_code_hot_path_and_its_fallbacks():
    # proc: a live child, so run_code takes its one-read path (without one it always falls back).
    with _live_client() as (_, client, peer):
        def answer(frames: bytes) -> None:
            peer.sendall(frames)

        # 1: the REPL's own forms; output of an older request dropped; a
        # trailing frame after "done" kept for the next call.
        answer(_frame(b'{"t":"out","id":0,"s":"stdout"}', b"old")
               + _frame(b'{"t":"out","id":1,"s":"stdout"}', b"2\n")
               + _frame(b'{"t":"out","id":1,"s":"stderr"}', b"e\xff")
               + _frame(b'{"t":"out","id":1,"s":"stdout"}', b"3")
               + _frame(b'{"t":"done","id":1,"lens":[-1,1],"interrupted":false}', b"2")
               + _frame(b'{"t":"out","id":1,"s":"stdout"}', b"late"))
        r = client.run_code("1+1")
        assert (r.stdout, r.stderr, r.error, r.value, r.interrupted) == ("2\n3", "e\ufffd", None, "2", False)
        assert peer.recv(100).endswith(b'{"t":"run","id":1}1+1')
        # 2: the kept frame is dropped by the general path (buffered bytes).
        answer(_frame(b'{"t":"done","id":2,"lens":[3,-1],"interrupted":true}', b"tb!"))
        r = client.run_code("x")
        assert (r.stdout, r.error, r.value, r.interrupted) == ("", "tb!", None, True)
        # 3: other JSON forms go through the general path.
        answer(_frame(b'{"lens": [-1, 1], "t": "done", "id": 3, "interrupted": false}', b"v"))
        assert client.run_code("x").value == "v"
        # 4: the tail (the REPL's usual reply: no out frame at all).
        answer(_frame(b'{"t":"done","id":4,"lens":[-1,1],"tail":[2,2],"interrupted":false}', b"22\ne\xff"))
        r = client.run_code("1+1")
        assert (r.stdout, r.stderr, r.value) == ("2\n", "e\ufffd", "2")
        # 5: lengths (lens + tail) that do not add up are refused.
        answer(_frame(b'{"t":"done","id":5,"lens":[-1,1],"tail":[2,0],"interrupted":false}', b"2"))
        with pytest.raises(SandboxError, match="wrong length"):
            client.run_code("x")
    # 5: a reply over max_output breaks the client even when it fits one read.
    with _live_client(max_output=4) as (_, client, peer):
        peer.sendall(_frame(b'{"t":"out","id":1,"s":"stdout"}', b"12345")
                     + _frame(b'{"t":"done","id":1,"lens":[-1,-1],"interrupted":false}'))
        with pytest.raises(SandboxError, match="max_output"):
            client.run_code("x")


def test_exec_hot_path_and_its_fallbacks():
    with _live_client() as (child, client, peer):
        repl = Repl(child, client, open(os.devnull, "wb"), "test")
        # 1: the REPL's own forms: out frames (an older request's dropped), the
        # done frame's tail after them, a negative code; the request as sent.
        peer.sendall(_frame(b'{"t":"out","id":0,"s":"stdout"}', b"old")
                     + _frame(b'{"t":"out","id":1,"s":"stdout"}', b"a")
                     + _frame(b'{"t":"out","id":1,"s":"stderr"}', b"e")
                     + _frame(b'{"t":"done","id":1,"lens":[],"tail":[2,1],"returncode":-9,"timed_out":false,'
                              b'"interrupted":false}', b"bcf"))
        p = repl.exec(["sh", "x\u00e9\"y", b"\xff"], timeout=2.5)
        assert (p.returncode, p.stdout, p.stderr) == (-9, b"abc", b"ef")
        assert type(p.stdout) is bytes
        sent = peer.recv(1000)
        assert sent.endswith(b'{"t":"exec","id":1,"argv":["sh","x\\u00e9\\"y","\\udcff"],"timeout":2.5}')
        # 2: a timeout's done (another form) goes through the general path.
        peer.sendall(_frame(b'{"t":"done","id":2,"lens":[],"tail":[1,0],"returncode":-9,"timed_out":true,'
                            b'"interrupted":false}', b"p"))
        with pytest.raises(TimeoutError) as e:
            repl.exec(["sleep", "9"], timeout=0.1)
        assert e.value.stdout == b"p"
        # 3: lengths that do not add up are refused.
        peer.sendall(_frame(b'{"t":"done","id":3,"lens":[],"tail":[2,0],"returncode":0,"timed_out":false,'
                            b'"interrupted":false}', b"x"))
        with pytest.raises(SandboxError, match="wrong length"):
            repl.exec(["true"])


def test_exec_waits_for_whoever_holds_its_output(repl):
    # The command exits first; a background process still writing to its
    # stdout is waited for, as subprocess.run(capture_output=True) does.
    p = repl.exec(["sh", "-c", "(sleep 0.2; echo late) & echo early"])
    assert (p.returncode, p.stdout) == (0, b"early\nlate\n")
    # A command that closes its stdout early is still waited for.
    p = repl.exec(["sh", "-c", "exec >&-; sleep 0.2; echo err >&2; exit 5"])
    assert (p.returncode, p.stdout, p.stderr) == (5, b"", b"err\n")


def test_output_flood_over_max_output_is_cut_off(tmp_path):
    r = Repl.spawn(lambda fd: python_argv(default_python()), env=dict(os.environ), set_ipc_env=True,
                   max_output=4 * 1024 * 1024)
    try:
        t0 = time.monotonic()
        with pytest.raises(SandboxError) as e:
            r.run("while True:\n    print('y' * 100000)")
        assert "max_output" in str(e.value)
        assert time.monotonic() - t0 < 10
    finally:
        r.close(timeout=5)


def test_sources_parse_as_38():
    import ast
    from pathlib import Path
    import layover
    for p in Path(layover.__file__).parent.glob("*.py"):
        ast.parse(p.read_text(), str(p), feature_version=(3, 8))
    assert sys.version_info >= (3, 8)


# A tool (Repl.call) that forges its own reply from inside: a result frame
# holding `value` and a done frame for request `rid`, then waits (the REPL's
# own reply would come after the host read the forged one).
FORGED_RESULT = HOSTILE_SEND + (
    "def tool():\n"
    "    import time\n"
    "    h = b'{\"t\":\"out\",\"id\":%(rid)d,\"s\":\"result\"}'\n"
    "    v = %(value)r\n"
    "    send(len(h).to_bytes(4, 'big') + len(v).to_bytes(4, 'big') + h + v)\n"
    "    h = (b'{\"t\":\"done\",\"id\":%(rid)d,\"lens\":[-1],\"tail\":[0,0],'\n"
    "         b'\"interrupted\":false,\"ok\":true%(extra)s}')\n"
    "    send(len(h).to_bytes(4, 'big') + (0).to_bytes(4, 'big') + h)\n"
    "    time.sleep(60)\n")


@pytest.mark.parametrize("value", [b"NaN", b"Infinity", b"-Infinity", b"1e400", b'{"x": [1, NaN]}'])
def test_a_forged_tool_result_of_nan_or_infinity_is_refused_not_returned(repl, value):
    # Repl.call parsed the result with json.loads, which takes NaN, Infinity
    # and 1e400 (a float inf): the caller got float("nan") from a channel
    # whose own JSON never holds one.
    src = FORGED_RESULT % {"rid": repl.client.next_id, "value": value, "extra": ""}
    with pytest.raises(SandboxError) as e:
        repl.call(src, "tool", timeout=30)
    assert "layover: the REPL sent a malformed tool result (" in str(e.value), e.value
    assert ("NaN, which JSON has not" if b"NaN" in value else "Infinity, which JSON has not" if b"Inf" in value
            else "1e400, a number past a float's range") in str(e.value), e.value
    assert repl.proc.poll() is not None  # the peer was stopped


def test_a_forged_header_holding_nan_is_refused(repl):
    # The headers' general path (json.loads) took NaN too: a done frame with
    # "returncode": NaN reached exec()'s CompletedProcess.
    src = FORGED_RESULT % {"rid": repl.client.next_id, "value": b"1", "extra": ',"pad":NaN'}
    with pytest.raises(SandboxError) as e:
        repl.call(src, "tool", timeout=30)
    assert "layover: the REPL sent a frame with a bad header (NaN, which JSON has not)" in str(e.value), e.value


def test_a_tool_result_with_a_lone_surrogate_is_kept_as_os_listdir_gives_it(repl):
    # A name that is not UTF-8, read inside as surrogateescape: it comes back
    # as the same str (os.fsencode gives its bytes), as before.
    assert repl.call("def f():\n    return 'bad\\udcffname'\n", "f") == "bad\udcffname"
