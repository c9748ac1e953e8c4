"""Leftovers (round 5): a running session's supervisor whose fd table is
full does not spin on its control socket (helper/sandbox/ipc/control.cc); the
MCP diff tool refuses an empty path; a deferred step is said in the MCP
tool's result. Each test fails before its fix."""
import json
import os
import resource
import socket
import time

from conftest import kill9_and_reap, proc_stat
from mcp_util import client, proj, text, wait_held  # noqa: F401 (fixtures)
from test_checkpoint import layers, start_running


def cpu_ticks(pid):
    st = proc_stat(pid)
    return int(st[11]) + int(st[12])  # utime + stime (fields 14, 15 of /proc/PID/stat)


def connect(sock):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    fd = os.open(str(sock.parent), os.O_PATH)
    try:
        c.connect("/proc/self/fd/%d/control.sock" % fd)
    finally:
        os.close(fd)
    return c


def answer(sock, timeout):
    """The supervisor's reply to a request it refuses whatever it holds
    (an unknown op), or None when none came in `timeout` seconds."""
    c = connect(sock)
    c.settimeout(timeout)
    c.send(json.dumps({"op": "nosuch"}).encode())
    try:
        return json.loads(c.recv(65536))
    except socket.timeout:
        return None
    finally:
        c.close()


def test_a_full_fd_table_does_not_spin_the_supervisor_and_control_works_after(lo):
    # accept() failing with EMFILE left the connection queued: the control
    # socket stayed readable and the supervisor's poll loop woke at once,
    # forever, a core at 100% until the fd table had room again.
    p, sock = start_running(lo, "fd", "echo a > a.txt; cd /; exec sleep 120")
    try:
        soft, hard = resource.prlimit(p.pid, resource.RLIMIT_NOFILE)
        # The supervisor's fds cannot be listed (it is not dumpable): the
        # limit comes down until a request finds its table full (poll()
        # needs at least its 10 fds' worth).
        for n in range(256, 9, -1):
            resource.prlimit(p.pid, resource.RLIMIT_NOFILE, (n, hard))
            r = answer(sock, 5)
            if r is None or "malformed" not in r.get("error", ""):
                break
        assert p.poll() is None
        assert r is None or r["error"].startswith("the session's supervisor is out of file descriptors ("), r
        c = connect(sock)
        c.send(json.dumps({"op": "checkpoint", "label": "x"}).encode())
        hz = os.sysconf("SC_CLK_TCK")
        before, start = cpu_ticks(p.pid), time.monotonic()
        time.sleep(2)  # a window to measure the supervisor's CPU in, not a wait for anything
        used = (cpu_ticks(p.pid) - before) / hz
        window = time.monotonic() - start
        assert used < 0.25 * window, "the supervisor used %.2f s of CPU in %.2f s" % (used, window)
        c.settimeout(30)
        r = json.loads(c.recv(65536))
        assert r["ok"] is False and "out of file descriptors" in r["error"] and "try again" in r["error"], r
        c.close()
        resource.prlimit(p.pid, resource.RLIMIT_NOFILE, (soft, hard))
        # With room again the socket serves as before; nothing was done meanwhile.
        assert layers(lo, "fd") == []
        r = lo("checkpoint", "fd", "-m", "after")
        assert r.returncode == 0, r.stderr.decode(errors="replace")
        assert r.stdout.decode() == "session 'fd': step 1\n"
        assert layers(lo, "fd") == ["0001"]
        assert (lo.session_dir("fd") / "steps" / "0001" / "a.txt").read_text() == "a\n"
        assert p.poll() is None
    finally:
        kill9_and_reap(p)


def test_mcp_diff_of_an_empty_path_is_refused_not_every_file(client, proj):
    # Before: paths [""] reached `layover diff -- ''`, and '' (the target
    # itself) selected every change: the agent asked for one file's diff
    # (an empty variable) and got the whole session's.
    c = client()
    assert not c.call("write_file", path="src/app.py", content="v2\n")["isError"]
    assert not c.call("write_file", path="other.txt", content="o\n")["isError"]
    for paths in ([""], ["src/app.py", ""]):
        r = c.call("diff", paths=paths)
        assert r["isError"], r
        assert text(r) == ("diff: argument 'paths' holds an empty path (\"\"), which would select every change; "
                           "name paths relative to the target, or leave out 'paths' for the whole diff"), text(r)
    d = text(c.call("diff", paths=["src/app.py"]))
    assert "+v2" in d and "other.txt" not in d
    assert not (proj / "other.txt").exists()


def test_mcp_a_deferred_step_is_said_in_the_tool_result(client, state_dir):
    # Before: the step after a mutating call that the checkpoint refused was
    # deferred in silence for the agent: only the server's stderr (which the
    # agent does not read) and, later, `layover log` said so.
    c = client(session="mcp-defer")
    steps = state_dir / "sessions" / "mcp-defer" / "steps"
    r = c.call("write_file", path="a.txt", content="a\n")
    assert not r["isError"] and "deferred" not in text(r), r
    assert (steps / "0001" / "a.txt").read_text() == "a\n"
    job = c.call("start_command", command="exec 3>held; sleep 600")["structuredContent"]["job_id"]
    wait_held(state_dir, "mcp-defer")
    r = c.call("write_file", path="b.txt", content="b\n")
    assert not r["isError"], r
    last = text(r).splitlines()[-1]
    assert last.startswith("layover: the step after write_file b.txt is deferred (merged into the next): "), last
    why = last[len("layover: the step after write_file b.txt is deferred (merged into the next): "):]
    assert ("held" in why or "working directory" in why) and "nothing changed" not in why, last
    assert len(text(r).splitlines()) == 2, text(r)  # the tool's own line, then that one
    assert not (steps / "0002").exists()
    c.call("kill_command", job_id=job)
    r = c.call("run_command", command="echo c > c.txt")
    assert not r["isError"] and "deferred" not in text(r), r
    assert sorted(p.name for p in (steps / "0002").iterdir()) == ["b.txt", "c.txt", "held"]


def test_mcp_a_call_refused_by_its_checks_adds_no_deferred_step_note(client, state_dir):
    # Before (newuser17): run_command with a cwd that is not there, refused before anything ran, still ended
    # with "the step after run_command ... is deferred" while a job held a file: a step of nothing.
    c = client(session="mcp-refused")
    steps = state_dir / "sessions" / "mcp-refused" / "steps"
    assert not c.call("write_file", path="a.txt", content="a\n")["isError"]
    job = c.call("start_command", command="exec 3>held; sleep 600")["structuredContent"]["job_id"]
    wait_held(state_dir, "mcp-refused")
    for name, args in (("run_command", {"command": "echo x > x.txt", "cwd": "nope"}),
                       ("edit_file", {"path": "a.txt", "old_string": "zzz", "new_string": "y"})):
        r = c.call(name, **args)
        assert r["isError"] and "deferred" not in text(r) and len(text(r).splitlines()) == 1, (name, text(r))
    c.call("kill_command", job_id=job)
    r = c.call("run_command", command="echo c > c.txt")
    assert not r["isError"] and "deferred" not in text(r), r
    labels = [s["label"] for s in c.call("log")["structuredContent"]["steps"]]
    assert labels == ["run_command echo c > c.txt", "write_file a.txt"], labels  # no step of the refused calls
    assert sorted(p.name for p in (steps / "0002").iterdir()) == ["c.txt", "held"]
