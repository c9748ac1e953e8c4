"""A cancel that reaches `layover mcp`'s agent right behind its request (issue flake2).

The SDK client test (test_mcp_sdk.py) once saw its cancelled command still alive under load. The
agent (python/layover/_mcp_agent.py) runs each request in a thread of its own, and that thread
made the request's stop event and noted its command only after the command had started; a cancel
read by the main loop before then found neither and was dropped, and the command ran on to its
time limit (run_command's `timeout`, 900 s in the SDK test). A slow thread start on a loaded
machine opens that window; a cancel sent at once after the request (a client that gives up
straight away) hit it every time. The stop event now exists before the thread starts.

What is tested here: the agent itself, run as the test's user over a socketpair as the sandbox
runs it (the two sources as one program, `_LAYOVER_FD` set), gets `exec` and `cancel` in one
write, five times over: each call answers at once as cancelled, and the command's shell, which
wrote its pid before it slept, is gone.
"""
import json
import os
import pkgutil
import socket
import subprocess
import sys

WAIT = 60  # seconds an answer may take on a loaded machine; the command sleeps 600


def _frame(obj):
    data = json.dumps(obj).encode()
    return len(data).to_bytes(4, "big") + data


def _read(sock):
    def exact(n):
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            assert chunk, "the agent closed its socket"
            out += chunk
        return out
    return json.loads(exact(int.from_bytes(exact(4), "big")))


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_cancel_right_behind_its_command_kills_it(tmp_path):
    src = b"\n".join(pkgutil.get_data("layover", n) for n in ("_mcp_agent_files.py", "_mcp_agent.py"))
    (tmp_path / "agent.py").write_bytes(src)
    boot = ("import sys\n_LAYOVER_FD = int(sys.argv[1])\n"
            "exec(compile(open(sys.argv[2], 'rb').read(), 'agent', 'exec'))\n")
    mine, theirs = socket.socketpair()
    agent = subprocess.Popen([sys.executable, "-c", boot, str(theirs.fileno()), str(tmp_path / "agent.py")],
                             pass_fds=[theirs.fileno()], cwd=str(tmp_path), stdin=subprocess.DEVNULL,
                             env=dict(os.environ, LAYOVER_TARGET=str(tmp_path)))
    theirs.close()
    mine.settimeout(WAIT)
    try:
        assert _read(mine)["hello"] == 1
        for rid in range(1, 6):
            pidfile = tmp_path / ("pid-%d" % rid)
            cmd = "echo $$ > %s; exec sleep 600" % pidfile
            mine.sendall(_frame({"op": "exec", "id": rid, "command": cmd, "timeout": 900}) +
                         _frame({"op": "cancel", "target": rid}))
            r = _read(mine)  # socket.timeout here: the cancel was lost and the command runs on
            assert r["id"] == rid
            # Cancelled before its command started (an error that says so) or after (killed).
            assert r.get("error") == "cancelled" or (r["ok"] and r["cancelled"] and r["exit_code"] == 128 + 9), r
            if pidfile.exists() and pidfile.read_text().strip():
                assert not _alive(int(pidfile.read_text())), r
        mine.sendall(_frame({"op": "exit"}))
        assert agent.wait(WAIT) == 0
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
        mine.close()
