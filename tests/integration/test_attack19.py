"""The attack pass of 27 Nov (attack19) on the day's changes: a kept
session's links made by the rename worker, the worker's queue, and
`layover mcp`'s gate between writing calls and freezes."""
import errno
import json
import os
import signal
import time

import pytest

from apply_util import python_session_stopping_at_commit, stopped_apply
from conftest import LAYOVER  # noqa: F401 (the binary under test)
from mcp_util import client, proj, text  # noqa: F401 (fixtures)


def _outcomes(lo, script, session):
    r = lo.run(script, session=session, timeout=60) if session else lo.run(script, on_exit="discard", timeout=60)
    assert r.returncode == 0, r.stderr
    return dict(x.split(" ", 1) for x in r.stdout.decode().splitlines())


def test_a_link_through_proc_self_dotdot_is_the_sandboxs_proc_never_the_hosts(lo, tmp_path):
    """The worker made a link whose source ran through /proc/self from the
    host's /proc/PID dir: its `..` was the host's /proc and /, so a link from
    /proc/self/../../PATH or /proc/self/../PID/... told the sandbox, by
    EXDEV against ENOENT, which host files (here, beside the target, outside
    the private /tmp) and which host processes exist. The kernel resolves it
    in the sandbox's /proc and tree: each outcome must be the kernel's."""
    host_only = tmp_path / "host-only.txt"
    host_only.write_text("on the host alone\n")
    # linkat(AT_SYMLINK_FOLLOW) itself: os.link() calls link(2), which
    # links a magic link as the symlink it is (EXDEV, procfs)
    script = ("cd '%s' && python3 -c 'import ctypes, os\n"
              "l = ctypes.CDLL(None, use_errno=True)\n"
              "def do(what, src):\n"
              "    rc = l.linkat(-100, src.encode(), -100, (\"made-%%s\" %% what).encode(), 0x400)\n"
              "    print(what, 0 if rc == 0 else ctypes.get_errno())\n"
              "do(\"hostfile\", \"/proc/self/../..%s\")\n"
              "do(\"hostfile2\", \"/proc/thread-self/../../../..%s\")\n"
              "do(\"hostpid\", \"/proc/self/../%d/status\")\n"
              "do(\"hostroot\", \"/proc/self/../%d/root%s\")\n"
              # an O_TMPFILE in the private /tmp, as atomic writers link one (in
              # the overlay, EXDEV either way)
              "os.chdir(\"/tmp\")\n"
              "def tmp():\n"
              "    fd = os.open(\".\", os.O_TMPFILE | os.O_WRONLY, 0o600); os.write(fd, b\"mine\"); return fd\n"
              "do(\"ownpid\", \"/proc/self/../%%d/fd/%%d\" %% (os.getpid(), tmp()))\n"
              "do(\"selffd\", \"/proc/self/fd/%%d\" %% tmp())\n"
              "do(\"threadfd\", \"/proc/thread-self/fd/%%d\" %% tmp())\n"
              "rc = l.linkat(999, b\"\", -100, b\"made-badfd\", 0x1000)\n"  # AT_EMPTY_PATH, no such fd
              "print(\"badfd\", 0 if rc == 0 else ctypes.get_errno())\n"
              "print(\"content\", open(\"made-ownpid\").read() if os.path.exists(\"made-ownpid\") else None)\n"
              "'" % (lo.target, host_only, host_only, os.getpid(), os.getpid(), host_only))
    kernel = _outcomes(lo, script, None)
    kept = _outcomes(lo, script, "procdot")
    assert kernel["hostfile"] == kernel["hostpid"] == str(errno.ENOENT), kernel
    assert kernel["ownpid"] == kernel["selffd"] == kernel["threadfd"] == "0", kernel
    assert kernel["content"] == "mine" and kernel["badfd"] == str(errno.EBADF), kernel
    assert kept == kernel, (kept, kernel)


def test_a_flood_of_links_behind_a_directory_move_waits_its_turn(lo):
    """While the worker copies a directory the overlay cannot rename (a
    real one), more calls than its socket holds came in (80 threads linking,
    each source path ~4000 bytes): the full socket stopped the worker, the
    move was cut off midway (EXDEV, a half-made temporary copy left), and
    every waiting call was let run as the task asked, the kernel resolving
    its paths again (the race the worker closes, reopened at will). They
    wait their turn now: the move and every link end as the kernel's own
    would, each link where it was noted."""
    big = lo.target / "big"
    big.mkdir()
    for i in range(3000):
        (big / ("f%04d.txt" % i)).write_text("%d\n" % i)
    pad = "./" * 1990
    script = ("cd '%s' && python3 -c 'import os, threading, time\n"
              "out = {}\n"
              "def move():\n"
              "    try: os.rename(\"big\", \"big2\"); out[\"move\"] = 0\n"
              "    except OSError as e: out[\"move\"] = e.errno\n"
              "def link(i):\n"
              "    try: os.link(\"old/%sa.txt\", \"l%%d.txt\" %% i); out[i] = 0\n"
              "    except OSError as e: out[i] = e.errno\n"
              "m = threading.Thread(target=move); m.start(); time.sleep(0.05)\n"
              "ts = [threading.Thread(target=link, args=(i,)) for i in range(80)]\n"
              "[t.start() for t in ts]; [t.join() for t in ts]; m.join()\n"
              "print(\"move\", out.pop(\"move\"))\n"
              "print(\"links\", sorted(set(out.values())))\n"
              "print(\"left\", sorted(n for n in os.listdir(\".\") if n.startswith(\".layover\")))\n"
              "'" % (lo.target, pad))
    got = _outcomes(lo, script, "flood")
    assert got == {"move": "0", "links": "[0]", "left": "[]"}, got
    up = lo.upper("flood")
    assert len(os.listdir(up / "big2")) == 3000
    assert all((up / ("l%d.txt" % i)).read_text() == "a\n" for i in range(80))


def test_mcp_a_cancelled_rollback_waiting_for_a_command_never_runs(client):
    """A rollback waits for the writing calls to end (attack18's gate). The
    client cancelled it meanwhile (notifications/cancelled): it still ran
    once the command ended, and set aside what the agent wrote since."""
    from test_sandbox_core import _pids_with
    c = client()
    assert not c.call("write_file", path="kept.txt", content="step one\n")["isError"]
    # Each step waits for the one before it, not for a fixed time (on a
    # loaded machine the rollback could take the gate before the command
    # did, or still wait as the command ended): the command runs (its sleep,
    # of a length no other test uses, is seen), so its call holds the gate;
    # the rollback is sent, then its cancel, which the server has read once
    # it answers the ping sent after it (one reader, in order).
    slow = c.start("tools/call", {"name": "run_command", "arguments": {"command": "sleep 3.019"}})
    deadline = time.monotonic() + 60
    while not _pids_with("sleep\x003.019\x00"):
        assert time.monotonic() < deadline, "the command never started: " + c.stderr()
        time.sleep(0.02)
    rb = c.start("tools/call", {"name": "rollback", "arguments": {"step": 0}})
    c.notify("notifications/cancelled", {"requestId": rb, "reason": "took too long"})
    c.request("ping")
    assert not c.response(slow)["result"]["isError"]
    assert not c.call("write_file", path="after.txt", content="written after the cancel\n")["isError"]
    time.sleep(1)
    for name in ("kept.txt", "after.txt"):
        r = c.call("read_file", path=name)
        assert not r["isError"], text(r)
    assert c.close() == 0


def test_mcp_a_checkpoint_waits_for_overlapping_writers_never_for_good(client):
    """Writing calls that overlap without end (each starts before the last
    ends) never let the writer count reach 0: a checkpoint or rollback
    waited for good. A waiting freeze now goes before the writers that come
    after it."""
    c = client()
    assert not c.call("write_file", path="a.txt", content="a\n")["isError"]
    writers, msgs, cp, took = [], [], None, None
    t0 = time.monotonic()
    while time.monotonic() - t0 < 8 and took is None:
        writers.append(c.start("tools/call", {"name": "run_command", "arguments": {"command": "sleep 1"}}))
        if cp is None and time.monotonic() - t0 > 1:
            cp = c.start("tools/call", {"name": "checkpoint", "arguments": {"label": "amid"}})
            sent = time.monotonic()
        time.sleep(0.4)
        while not c.q.empty():
            m = c.q.get_nowait()
            msgs.append(m)
            if cp is not None and m is not None and m.get("id") == cp and "result" in m:
                took = time.monotonic() - sent
                assert not m["result"]["isError"], text(m["result"])
    assert took is not None, "the checkpoint still waited for the overlapping writers after %.0f s" % (
        time.monotonic() - sent)
    left = set(writers) - {m.get("id") for m in msgs if m is not None and ("result" in m or "error" in m)}
    while left:
        left.discard(c.wait_for(lambda m: m.get("id") in left and ("result" in m or "error" in m))["id"])
    assert c.close() == 0


# The helper verb's timeout: long enough that `layover apply` reaches its
# fault point's stop before the timeout's SIGTERM on a loaded machine (with
# 1 s, a slow start could take the SIGTERM before the stop, and apply
# rolled back, or had no handler yet).
TIMEOUT = 5


def _sigterm_pending(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            pending = [int(ln.split()[1], 16) for ln in f if ln.startswith(("SigPnd:", "ShdPnd:"))]
    except OSError:
        return True  # gone: nothing to wait for
    return any(m & (1 << (signal.SIGTERM - 1)) for m in pending)


def _go_on_after_the_timeout(session):
    """A thread that lets the apply of `session` a fault point stopped go
    on once the timeout's SIGTERM waits for it (not a fixed 3 s later)."""
    import threading

    def go_on():
        for _ in range(1200):
            pid = stopped_apply(session)
            if pid:
                deadline = time.monotonic() + TIMEOUT + 60
                while not _sigterm_pending(pid) and time.monotonic() < deadline:
                    time.sleep(0.02)
                os.kill(pid, signal.SIGCONT)
                return
            time.sleep(0.05)
    t = threading.Thread(target=go_on)
    t.start()
    return t


def test_python_a_helper_verb_past_its_timeout_is_stopped_by_sigterm_never_killed_mid_commit(
        require_sandbox, state_dir, home):
    """Helper.run()'s timeout (600 s for apply()) SIGKILLed `layover apply`
    at once: past it mid-commit, the tree was left half-applied, with
    `.layover-tmp.*` files and a journal, until the next apply or undo.
    SIGTERM now, which apply holds until the tree is whole, then a grace."""
    sb = python_session_stopping_at_commit(home, state_dir, "py19t")
    t = _go_on_after_the_timeout("py19t")
    # The commit ran to its end before the SIGTERM took the helper, which
    # printed its whole result first: that is what the call returns (it
    # said "did not finish" before, though every file was applied).
    r = sb.helper.run(["apply", "py19t", "--yes", "--json"], ok=(0, 1), timeout=TIMEOUT)
    t.join()
    assert r.returncode == 0
    assert len(json.loads(r.stdout)["applied"]) == 12
    assert all((home / ("f%d" % i)).read_text() == "new%d\n" % i for i in range(1, 13))
    assert [n for n in os.listdir(str(home)) if n.startswith(".layover-tmp")] == []
    assert os.listdir(str(state_dir / "journal")) == []


def test_python_a_helper_verb_stopped_in_staging_by_its_timeout_says_nothing_was_applied(
        require_sandbox, state_dir, home):
    """Stopped by the timeout's SIGTERM while staging, apply rolls back: the
    error says so, in the helper's own words, and the tree is untouched."""
    from layover import SandboxError
    sb = python_session_stopping_at_commit(home, state_dir, "py19s")
    sb.helper.env["LAYOVER_FAULT"] = "apply:stage:2:stop"
    t = _go_on_after_the_timeout("py19s")
    with pytest.raises(SandboxError, match=r"did not finish within %d s; it was stopped: layover: apply: stopped by "
                       r"SIGTERM; nothing was applied$" % TIMEOUT):
        sb.helper.run(["apply", "py19s", "--yes", "--json"], ok=(0, 1), timeout=TIMEOUT)
    t.join()
    assert all((home / ("f%d" % i)).read_text() == "orig%d\n" % i for i in range(1, 13))
    assert [n for n in os.listdir(str(home)) if n.startswith(".layover-tmp")] == []
    assert os.listdir(str(state_dir / "journal")) == []
