"""`layover mcp` (docs/mcp.md): the protocol and every tool, driven by a
client written here over a pipe, as an agent's MCP client would drive it.
Each test checks the real tree afterwards and, where it ends the server,
that `layover status` shows the kept session."""
import json
import os
import random
import signal
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LAYOVER, proc_stat, real_dir, snapshot
from mcp_util import McpClient, client, conforms, proj, status, text  # noqa: F401 (fixtures)

TOOLS = {"run_command", "start_command", "read_output", "kill_command", "read_file", "write_file", "edit_file",
         "list_directory", "search_files", "changes", "diff", "checkpoint",
         "log", "rollback", "review_feedback"}


def test_mcp_every_tool_works_in_the_sandbox_and_the_real_tree_is_untouched(client, proj, state_dir):
    before = snapshot(proj)
    c = client()
    tools = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
    assert set(tools) == TOOLS
    for t in tools.values():
        schema = json.dumps(t["inputSchema"])
        assert "oneOf" not in schema and "anyOf" not in schema and t["inputSchema"]["type"] == "object"
        assert t["inputSchema"]["additionalProperties"] is False, t["name"]  # as the server enforces
        assert {"readOnlyHint", "openWorldHint"} <= set(t["annotations"]), t["name"]
        assert t["outputSchema"]["type"] == "object"
    assert tools["read_file"]["annotations"]["readOnlyHint"] is True
    assert tools["write_file"]["annotations"]["readOnlyHint"] is False
    assert tools["run_command"]["annotations"]["openWorldHint"] is False  # default network: loopback

    results = {}

    def call(name, **args):
        r = c.call(name, **args)
        if "structuredContent" in r:
            assert conforms(r["structuredContent"], tools[name]["outputSchema"]), (name, r)
        results.setdefault(name, []).append(r)
        return r

    r = call("write_file", path="notes/new.txt", content="alpha\nbeta\n")
    assert not r["isError"] and r["structuredContent"]["bytes_written"] == 11
    r = call("read_file", path="notes/new.txt")
    assert "1\talpha" in text(r) and r["structuredContent"]["end_line"] == 2
    r = call("read_file", path="src/app.py", offset=2, limit=1)
    assert "2\tprint('v1 again')" in text(r) and r["structuredContent"]["start_line"] == 2
    assert call("read_file", path="missing.txt")["isError"]
    r = call("read_file", path="data.bin")
    assert r["isError"] and "binary" in text(r)
    assert "directory" in text(call("read_file", path="src"))

    r = call("edit_file", path="src/app.py", old_string="v1", new_string="v2")
    assert r["isError"] and "2 times" in text(r)
    r = call("edit_file", path="src/app.py", old_string="v1 again", new_string="v2 again")
    assert not r["isError"] and r["structuredContent"]["replacements"] == 1
    assert "not found" in text(call("edit_file", path="src/app.py", old_string="nope", new_string="x"))
    r = call("edit_file", path="README.md", old_string="demo", new_string="demo2", replace_all=True)
    assert not r["isError"]

    r = call("list_directory", path=".", depth=2)
    paths = {e["path"]: e["type"] for e in r["structuredContent"]["entries"]}
    assert paths["src"] == "dir" and paths["src/app.py"] == "file" and paths["notes/new.txt"] == "file"
    r = call("search_files", pattern=r"v2 \w+", glob="*.py")
    assert r["structuredContent"]["matches"] == ["src/app.py:2:print('v2 again')"]

    r = call("run_command", command="echo out; echo err >&2; cat > made.txt; exit 3", stdin="from stdin\n")
    s = r["structuredContent"]
    assert r["isError"] and s["exit_code"] == 3 and s["stdout"] == "out\n" and s["stderr"] == "err\n"
    r = call("run_command", command="cat ../made.txt && pwd", cwd="src")
    assert r["structuredContent"]["stdout"] == "from stdin\n%s/src\n" % proj and not r["isError"]
    r = call("run_command", command="head -c 200000 /dev/zero | tr '\\0' x; echo; echo END")
    s = r["structuredContent"]
    assert s["truncated"] and s["stdout"].startswith("xxx") and s["stdout"].endswith("END\n")
    assert "bytes omitted" in s["stdout"] and len(s["stdout"]) < 31000
    r = call("run_command", command="head -c 300000 /dev/zero | tr '\\0' o; head -c 300000 /dev/zero | tr '\\0' e >&2")
    s = r["structuredContent"]
    assert s["truncated"] and len(s["stdout"]) + len(s["stderr"]) < 41000 and s["stderr"].startswith("eee")
    r = call("run_command", command="sleep 30", timeout=1)
    assert r["isError"] and r["structuredContent"]["timed_out"] is True

    job = call("start_command", command="echo started; exec sleep 600")["structuredContent"]["job_id"]
    r = call("read_output", job_id=job, wait=30)
    assert r["structuredContent"]["stdout"] == "started\n" and r["structuredContent"]["running"] is True
    r = call("kill_command", job_id=job)
    assert r["structuredContent"]["running"] is False and r["structuredContent"]["exit_code"] == 128 + 9
    assert call("read_output", job_id="job-999")["isError"]

    r = call("changes")
    s = r["structuredContent"]
    kinds = {ch["path"]: ch["kind"] for ch in s["changes"]}
    assert kinds["notes/new.txt"] == "added" and kinds["src/app.py"] == "modified"
    assert "layover apply mcp-test" in text(r) and s["session"] == "mcp-test"
    r = call("diff", paths=["src/app.py"])
    assert "+print('v2 again')" in text(r) and "notes/new.txt" not in text(r)
    assert "+alpha" in text(call("diff"))

    assert c.close() == 0
    assert snapshot(proj) == before  # nothing reached the real tree
    err = c.stderr()
    assert "layover status mcp-test" in err and "layover apply mcp-test" in err
    st = status(state_dir, "mcp-test")
    assert st.returncode == 0 and "A  notes/" in st.stdout and "M  src/app.py" in st.stdout
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in c.lines)  # nothing but protocol
    # `layover sessions` says what made the session, never the server's bootstrap command.
    ls = subprocess.run([LAYOVER, "sessions", "--json"], capture_output=True, text=True, check=True,
                        env=dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))).stdout
    s = [x for x in json.loads(ls) if x["name"] == "mcp-test"][0]
    assert s["label"] == "mcp: %s" % proj and s["what"].startswith("mcp: /") and " -c " not in s["what"], s


def test_mcp_calls_run_concurrently_report_progress_and_cancel_kills_the_group(client, proj, state_dir):
    c = client()
    # A long command (with a child in its group) writes its pids, then waits.
    slow = c.start("tools/call", {"name": "run_command", "_meta": {"progressToken": "tok"},
                                  "arguments": {"command": "sleep 600 & echo $$ $! > pids; wait", "timeout": 900}})
    seen = []
    progress = c.wait_for(lambda m: m.get("method") == "notifications/progress", seen)
    assert progress["params"]["progressToken"] == "tok" and progress["params"]["progress"] >= 1
    # While it runs, other calls are answered.
    r = c.call("read_file", path="pids")
    pids = text(r).split("\t", 1)[1].split()
    assert len(pids) == 2 and not r["isError"]
    assert not c.call("changes")["isError"]
    c.notify("notifications/cancelled", {"requestId": slow, "reason": "test"})
    alive = "for p in %s; do kill -0 $p 2>/dev/null && echo alive $p; done; true" % " ".join(pids)
    end = time.monotonic() + 60  # the group dies; the sandbox and the server stay up
    while True:  # (100 calls, not a deadline, can pass before the agent reaps it on a loaded machine)
        r = c.call("run_command", command=alive)
        if r["structuredContent"]["stdout"] == "" or time.monotonic() > end:
            break
        time.sleep(0.1)
    assert r["structuredContent"]["stdout"] == "" and not r["isError"]
    assert c.request("ping")["result"] == {}
    assert c.close() == 0
    answered = [m for m in seen + list(drain(c)) if m.get("id") == slow]
    assert answered == []  # a cancelled request gets no response
    assert status(state_dir, "mcp-test").returncode == 0


def drain(c):
    while True:
        m = c.q.get(timeout=60)
        if m is None:
            return
        yield m


@pytest.mark.parametrize("asked,got", [("2025-11-25", "2025-11-25"), ("2025-06-18", "2025-06-18"),
                                       ("2025-03-26", "2025-03-26"), ("2024-11-05", "2024-11-05"),
                                       ("1999-01-01", "2025-11-25"), ("2026-07-28", "2025-11-25")])
def test_mcp_initialize_negotiates_the_version(client, asked, got):
    c = client(init=False)
    r = c.initialize(asked)["result"]
    assert r["protocolVersion"] == got
    assert r["capabilities"] == {"tools": {"listChanged": False}}  # tools only: no logging
    assert r["serverInfo"]["name"] == "layover"
    tools = c.request("tools/list")["result"]["tools"]
    assert ("outputSchema" in tools[0]) == (got >= "2025-06-18")
    assert ("annotations" in tools[0]) == (got >= "2025-03-26")
    r = c.call("run_command", command="echo hi")
    assert text(r).startswith("hi\n") and ("structuredContent" in r) == (got >= "2025-06-18")
    assert "resultType" not in r
    assert c.request("initialize", {"protocolVersion": got})["error"]["code"] == -32600
    assert c.close() == 0


def test_mcp_protocol_errors_are_answered_and_the_server_stays_up(client, proj):
    c = client(init=False)
    assert c.request("tools/list")["error"]["code"] == -32600  # before initialize
    assert c.request("ping")["result"] == {}  # ping is allowed before it
    c.initialize()
    c.send_raw(b"this is not json\n")
    assert c.wait_for(lambda m: "error" in m)["error"]["code"] == -32700
    assert c.request("no/such/method")["error"]["code"] == -32601
    assert c.request("tools/call", {"name": "no_such_tool"})["error"]["code"] == -32602
    assert c.request("tools/call", {"name": "read_file", "arguments": [1]})["error"]["code"] == -32602
    r = c.call("read_file", path=7)
    assert r["isError"] and "must be a string" in text(r)
    r = c.call("run_command", command="true", timeout=99999)
    assert r["isError"] and "between" in text(r)
    r = c.call("run_command")
    assert r["isError"] and "missing argument 'command'" in text(r)
    c.send([{"jsonrpc": "2.0", "id": 90, "method": "ping"}])
    assert c.wait_for(lambda m: "error" in m)["error"]["code"] == -32600
    c.send({"jsonrpc": "2.0", "id": None, "method": "ping"})
    assert c.wait_for(lambda m: "error" in m)["error"]["code"] == -32600
    c.notify("notifications/unknown", {"x": 1})  # no answer
    assert c.request("ping")["result"] == {}
    assert c.close() == 0


def test_mcp_random_and_truncated_lines_never_crash_the_server(client, proj):
    c = client()
    rng = random.Random(1717)
    valid = [json.dumps({"jsonrpc": "2.0", "id": i, "method": m, "params": p}).encode()
             for i, (m, p) in enumerate([("ping", {}), ("tools/list", {}),
                                         ("tools/call", {"name": "read_file", "arguments": {"path": "README.md"}}),
                                         ("tools/call", {"name": "list_directory", "arguments": {}})], 1000)]
    sent = 0
    for _ in range(300):
        pick = rng.random()
        if pick < 0.4:
            line = rng.choice(valid)[:rng.randrange(1, 60)]  # truncated
        elif pick < 0.7:
            line = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 80))).replace(b"\n", b" ")
        elif pick < 0.85:  # valid JSON of the wrong shapes
            line = json.dumps(rng.choice([[], {}, 1, "x", None, {"jsonrpc": "2.0"}, {"method": 5},
                                          {"jsonrpc": "2.0", "id": {}, "method": "ping"},
                                          {"jsonrpc": "1.0", "id": 1, "method": "ping"},
                                          {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": "x"},
                                          {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                           "params": {"requestId": [1]}},
                                          {"jsonrpc": "2.0", "id": 4, "result": {}}])).encode()
        else:
            line = valid[rng.randrange(len(valid))].replace(b'"', b"'", 1)
        c.send_raw(line + b"\n")
        sent += 1
    c.send_raw(b"\xff\xfe{\n" + b"[" * 100000 + b"\n")  # invalid UTF-8, then deep nesting
    final = c.request("ping")  # still answering, in order
    assert final["result"] == {}
    r = c.call("read_file", path="README.md")
    assert "# demo" in text(r)
    assert c.close() == 0
    for line in c.lines:  # every byte on stdout is a JSON-RPC message
        assert json.loads(line)["jsonrpc"] == "2.0"
    assert sent == 300


def test_mcp_stateless_revision_2026_07_28(client, proj, state_dir):
    c = client(init=False, session="mcp-stateless")
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    r = c.request("server/discover", {"_meta": meta})["result"]
    assert r["resultType"] == "complete" and "2026-07-28" in r["supportedVersions"]
    assert "2025-11-25" in r["supportedVersions"] and r["capabilities"] == {"tools": {}}
    assert r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "layover"
    r = c.request("tools/list", {"_meta": meta})["result"]
    assert r["resultType"] == "complete" and r["ttlMs"] > 0 and r["cacheScope"] in ("public", "private")
    assert {t["name"] for t in r["tools"]} == TOOLS
    r = c.request("tools/call", {"_meta": meta, "name": "write_file",
                                 "arguments": {"path": "s.txt", "content": "stateless\n"}})["result"]
    assert r["resultType"] == "complete" and not r["isError"]
    e = c.request("tools/list", {"_meta": dict(meta, **{"io.modelcontextprotocol/protocolVersion": "1900-01-01"})})
    assert e["error"]["code"] == -32022
    assert e["error"]["data"]["requested"] == "1900-01-01" and "2026-07-28" in e["error"]["data"]["supported"]
    assert c.close() == 0
    assert not (proj / "s.txt").exists()
    assert "s.txt" in status(state_dir, "mcp-stateless").stdout


def test_mcp_runs_under_the_isolation_profile_and_passes_run_options(client, proj, state_dir):
    home = os.path.expanduser("~")
    os.makedirs(os.path.join(home, ".ssh"), exist_ok=True)
    with open(os.path.join(home, ".ssh", "id_mcp_test"), "w") as f:
        f.write("SECRET-KEY\n")
    hidden = proj / "private"
    hidden.mkdir()
    (hidden / "p.txt").write_text("private data\n")
    c = client("--env", "MCP_T=from-option", "--hide", str(hidden), "--on-exit", "discard",
               session="mcp-opts", env={"MCP_API_KEY": "host-secret"})
    r = c.call("run_command", command="echo $MCP_T; echo key=$MCP_API_KEY; cat ~/.ssh/id_mcp_test; "
                                      "cat private/p.txt; echo done")
    out = r["structuredContent"]["stdout"]
    assert "from-option" in out and "key=\n" in out and "SECRET-KEY" not in out
    assert "private data" not in out and out.endswith("done\n")
    r = c.call("run_command", command="grep -c Seccomp: /proc/self/status; grep Seccomp: /proc/self/status")
    assert "Seccomp:\t2" in r["structuredContent"]["stdout"]  # the default seccomp filter
    assert c.close() == 0
    assert status(state_dir, "mcp-opts").returncode != 0  # --on-exit discard removed it


def test_mcp_session_without_changes_is_not_called_kept(client, proj, state_dir):
    """A session that only read is removed at exit: stderr must not then
    tell the person it was kept and how to review it."""
    c = client(session="mcp-empty")
    assert "v1" in text(c.call("read_file", path="src/app.py"))
    assert c.close() == 0
    err = c.stderr()
    assert "made no changes; removed" in err, err
    assert "mcp-empty kept" not in err and "layover status mcp-empty" not in err, err
    assert status(state_dir, "mcp-empty").returncode != 0


def test_mcp_bad_options_and_sigterm(require_sandbox, proj, state_dir):
    env = dict(os.environ, LAYOVER_STATE_DIR=str(state_dir))
    r = subprocess.run([LAYOVER, "mcp", "--target", str(proj / "nope")], capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stdout == "" and "not a directory" in r.stderr
    for empty in (["--target", ""], ["--target="]):  # an unset variable is no target (found by the attack pass)
        r = subprocess.run([LAYOVER, "mcp", *empty], capture_output=True, text=True, env=env,
                           stdin=subprocess.DEVNULL, cwd=str(proj))
        assert r.returncode == 2 and r.stdout == "" and "--target needs a directory" in r.stderr, r.stderr
    r = subprocess.run([LAYOVER, "mcp", "--on-exit", "apply"], capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "apply is the person's" in r.stderr and r.stdout == ""
    r = subprocess.run([LAYOVER, "mcp", "--bogus"], capture_output=True, text=True, env=env,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
    c = McpClient(proj, state_dir, "mcp-term")
    try:
        c.initialize()
        assert not c.call("write_file", path="t.txt", content="x")["isError"]
        c.proc.send_signal(signal.SIGTERM)
        assert c.proc.wait(120) == 0
    finally:
        c.kill()
    assert "t.txt" in status(state_dir, "mcp-term").stdout and not (proj / "t.txt").exists()


def test_mcp_works_installed_with_no_environment(require_sandbox, state_dir):
    """An installed layout (bin/layover, lib/layover/layover-patch, the package
    from tests/install_python.sh): `layover mcp` finds the package itself,
    with no PYTHONPATH or LAYOVER_* variable but the state dir."""
    prefix = real_dir("mcp-inst-")
    (prefix / "bin").mkdir()
    (prefix / "lib" / "layover").mkdir(parents=True)
    binary = prefix / "bin" / "layover"
    shutil.copy2(LAYOVER, binary)
    shutil.copy2(os.path.join(os.path.dirname(LAYOVER), "layover-patch"), prefix / "lib" / "layover")
    root = Path(__file__).resolve().parents[2]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LAYOVER_", "PYTHON"))}
    r = subprocess.run([str(root / "tests" / "install_python.sh"), str(prefix)], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, r.stderr
    proj = real_dir("mcp-inst-proj-")
    env["LAYOVER_STATE_DIR"] = str(state_dir)
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
             "params": {"name": "run_command", "arguments": {"command": "echo installed > i.txt; cat i.txt"}}}]
    r = subprocess.run([str(binary), "mcp", "--target", str(proj), "--session", "mcp-inst"], env=env,
                       input="".join(json.dumps(m) + "\n" for m in msgs), capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out = [json.loads(line) for line in r.stdout.splitlines()]
    assert out[0]["result"]["protocolVersion"] == "2025-06-18"
    assert out[1]["result"]["structuredContent"]["stdout"] == "installed\n"
    assert "_mcp_server" not in r.stderr  # no traceback
    assert not (proj / "i.txt").exists() and "i.txt" in status(state_dir, "mcp-inst").stdout


def test_mcp_server_log_lines_hold_no_control_character_the_agent_chose(client, proj, state_dir):
    """The server's own stderr lines that quote the agent's arguments (the
    deferred step's label) carry no raw control or bidi character: found by
    the attack pass of 27 Nov, a write_file path with ESC reached stderr raw
    (the relay of the sandbox's output already replaced them)."""
    c = client(session="mcp-logesc")
    job = c.call("start_command", command="exec sleep 600")["structuredContent"]["job_id"]  # busy: step deferred
    hostile = "x\x1b]0;owned\x07\x1b[2K\x9b1A\u202etxt.sh"
    assert not c.call("write_file", path=hostile, content="b\n")["isError"]
    c.call("kill_command", job_id=job)
    c.close()
    err = c.stderr()
    assert "is deferred (merged into the next)" in err, err
    # The server retries by itself: the checkpoint's own advice is not passed on.
    assert "then checkpoint again" not in err and "nothing to do: the server makes it with the next" in err, err
    bad = [ch for ch in err if (ord(ch) < 32 and ch not in "\n\t") or 0x7f <= ord(ch) < 0xa0 or ch == "\u202e"]
    assert not bad, repr(err)


# Run inside the sandbox: `s`, the agent's channel to the server, taken
# from the agent (an ancestor holding it as fd 3) with pidfd_getfd.
TAKE_AGENT_CHANNEL = r"""
import ctypes, os, socket, sys, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.getpid()
while pid > 1:  # the agent: an ancestor holding the channel as fd 3
    pid = int(open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[1])
    if os.readlink("/proc/%d/fd/3" % pid).startswith("socket:") if os.path.exists("/proc/%d/fd/3" % pid) else False:
        break
fd = libc.syscall(438, os.pidfd_open(pid), 3, 0)  # pidfd_getfd
assert fd >= 0, os.strerror(ctypes.get_errno())
s = socket.socket(fileno=fd)
"""
FORGER = TAKE_AGENT_CHANNEL + r"""
n = int(sys.argv[1])
body = b'{"id": 987654321, "pad": "' + b"x" * (n - 28) + b'"}'
assert len(body) == n
s.sendall(n.to_bytes(4, "big"))
for i in range(0, n, 4096):  # in small pieces, each one read on its own
    s.sendall(body[i:i + 4096])
    time.sleep(0.0002)
print("sent", n)
"""


def _cpu(pid):
    f = proc_stat(pid)
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def test_mcp_a_frame_trickled_from_inside_costs_the_server_linear_time(client, proj, state_dir):
    """A command inside can take the agent's channel (pidfd_getfd: the agent
    is its own uid's process) and send frames; they are untrusted, and a big
    one sent in small pieces must cost the server (on the host) time in
    proportion to its size: found by the attack pass of 27 Nov, the reader
    grew a bytes object per piece, so a 32 MiB frame in 4 KiB pieces cost it
    seconds of CPU (hours for a stream of them) while it held the GIL."""
    c = client(session="mcp-trickle")
    assert not c.call("write_file", path="forge.py", content=FORGER)["isError"]
    before = _cpu(c.proc.pid)
    # Just under a reply's limit (16 MiB: one past it is refused unread, test_attack23.py).
    r = c.call("run_command", command="python3 forge.py %d" % ((16 << 20) - 64), timeout=600)
    assert "sent" in text(r), r
    spent = _cpu(c.proc.pid) - before
    assert spent < 1.5, spent  # the grown bytes object: 3.5 s here, 0.4 s now
    assert not c.call("read_file", path="forge.py")["isError"]  # the forged reply was dropped: no call had its id


def test_file_tools_refuse_a_fifo_and_never_block(client, proj):
    # The agent's own commands can leave a FIFO where a file tool writes or
    # reads: with no reader (or writer) on its other end, opening it would
    # block the call forever. Each tool answers with an error at once, and the
    # server serves the next call.
    c = client()
    assert not c.call("run_command", command="mkfifo pipe && ls -l pipe")["isError"]
    for name, args in (("write_file", {"content": "x\n"}), ("read_file", {}),
                       ("edit_file", {"old_string": "a", "new_string": "b"})):
        r = c.call(name, path="pipe", **args)
        assert r["isError"] and "pipe is not a regular file" in text(r), (name, r)
    r = c.call("write_file", path="after.txt", content="served\n")
    assert not r["isError"] and r["structuredContent"]["created"] is True
    r = c.call("run_command", command="test -p pipe && cat after.txt")
    assert r["structuredContent"]["stdout"] == "served\n"
    assert c.close() == 0
    assert not (proj / "pipe").exists() and not (proj / "after.txt").exists()


def _peak_rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return next(int(ln.split()[1]) for ln in f if ln.startswith("VmHWM:"))


def test_mcp_diff_of_a_huge_text_change_never_sits_whole_in_the_server(require_sandbox, proj, state_dir):
    """The diff tool's text is capped (TEXT_CAP); found by the attack pass of 26
    Nov: the server (on the host) read the whole `layover diff` output first,
    so an agent that wrote gigabytes of text made it hold them, and their
    decoded copy, in memory. 64 MB here: the server's peak must not grow by it."""
    c = McpClient(proj, state_dir, "mcp-bigdiff")
    try:
        c.initialize()
        r = c.call("run_command", command="for i in 1 2 3 4; do yes 'a line of text the agent wrote' | "
                   "head -c 16000000 > big$i.txt; done; ls big*")
        assert not r["isError"], r
        c.call("diff", paths=["README.md"])  # unchanged: warms the server up
        base = _peak_rss_kb(c.proc.pid)
        r = c.call("diff")
        assert not r["isError"], r
        d = r["structuredContent"]
        assert d["truncated"] and len(d["diff"]) < 45000
        assert d["diff"].startswith("diff --git a/big1.txt b/big1.txt") and " omitted ...]" in d["diff"]
        assert d["diff"].endswith("\n+a\n\\ No newline at end of file\n")  # big4.txt's last line
        grew = _peak_rss_kb(c.proc.pid) - base
        assert grew < 16000, "the server's peak RSS grew by %d kB over a 64 MB diff" % grew
    finally:
        c.kill()


def test_diff_works_beside_a_file_named_like_the_session(require_sandbox, proj, state_dir, tmp_path):
    # The helper refuses a session name that is also a file in its working
    # directory; the server ran it in its own, so such a file there (a patch
    # saved under the session's name) made the diff tool fail.
    here = tmp_path / "server-cwd"
    here.mkdir()
    (here / "mcp-samename").write_text("not the session\n")
    c = McpClient(proj, state_dir, "mcp-samename", cwd=str(here))
    try:
        c.initialize()
        assert not c.call("run_command", command="echo same >> README.md")["isError"]
        r = c.call("diff")
        assert not r["isError"] and "+same" in text(r), r
    finally:
        c.close()
