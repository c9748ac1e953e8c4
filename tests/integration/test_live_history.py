"""Rollback, revert and fork of a *running* session (issue 23): asked through
its supervisor (SESSION/control.sock), one request at a time, under the
freeze rule; the command inside goes on and sees the new view. A small
loop inside runs the commands the test drops in a --rw dir, so every check
reads the view a real process in the sandbox sees."""
import json
import re
import subprocess
import time
from pathlib import Path

import pytest

from capture_util import status_json
from conftest import LAYOVER
from test_checkpoint import digest, start_running

LOOP = ("cd /; echo a > {t}/a.txt; while :; do if [ -e {s}/cmd ]; then sh {s}/cmd > {s}/out 2>&1; "
        "rm {s}/cmd; fi; sleep 0.02; done")


@pytest.fixture(autouse=True)
def _no_session_outlives_its_test():
    # A failed assertion skips stop(): the session would run on after the suite.
    yield
    while Inside.started:
        p = Inside.started.pop()
        if p.poll() is None:
            p.kill()
            p.communicate(timeout=30)


class Inside:
    """A session whose command runs what the test asks, inside the sandbox."""
    started = []

    def __init__(self, lo, name, env=None):
        self.lo, self.name, self.t = lo, name, str(lo.target)
        self.s = Path(lo.state).parent / ("sig-" + name)
        self.s.mkdir()
        extra = ("--rw", str(self.s))
        if env:
            lo.env = dict(lo.env, **env)
        try:
            self.p, _ = start_running(lo, name, LOOP.format(t=self.t, s=self.s), extra)
            Inside.started.append(self.p)
        finally:
            for k in env or ():
                lo.env.pop(k)
        self.d = lo.session_dir(name)

    def __call__(self, cmd):
        # T/ not inside a name: the test dirs' own names may hold "T/".
        (self.s / "cmd.tmp").write_text(re.sub(r"(?<![\w.-])T/", lambda m: self.t + "/", cmd) + "\n")
        (self.s / "cmd.tmp").rename(self.s / "cmd")
        deadline = time.monotonic() + 60  # the loop inside on a loaded machine (it had 5 s)
        while time.monotonic() < deadline:
            if not (self.s / "cmd").exists():
                return (self.s / "out").read_text()
            time.sleep(0.01)
        raise AssertionError("the command inside did not run: " + cmd)

    def names(self):
        return sorted(self("ls T/").split())

    def stop(self):
        self.p.terminate()
        return self.p.communicate(timeout=30)


def layer(lo, name, n):
    """Step n's layer: its dir, or the store's layer its reference names."""
    d = lo.session_dir(name) / "steps"
    if (d / ("%04d" % n)).is_dir():
        return d / ("%04d" % n)
    return Path(lo.state) / "layers" / (d / ("%04d.ref" % n)).read_text().strip()


def ok(r):
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    return r.stderr.decode()


def test_rollback_and_undo_of_a_running_session_remount_its_view(lo):
    s = Inside(lo, "rb")
    try:
        assert s("cat T/a.txt") == "a\n"
        ok(lo("checkpoint", "rb", "-m", "one"))
        s("echo b > T/b.txt; echo a2 > T/a.txt")
        ok(lo("checkpoint", "rb", "-m", "two"))
        s("echo c > T/c.txt")
        before = {n: digest(layer(lo, "rb", n)) for n in (1, 2)}
        names = s.names()
        # Two requests at once: served one after the other, both whole (the
        # checkpoint first freezes c.txt as step 3; else the rollback does).
        a = subprocess.Popen([LAYOVER, "rollback", "rb", "1"], env=lo.env, stderr=subprocess.PIPE)
        b = subprocess.Popen([LAYOVER, "checkpoint", "rb"], env=lo.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        err = a.communicate(timeout=60)[1].decode()
        assert a.returncode == 0, err
        assert "session 'rb' rolled back to step 1 (2 later steps set aside" in err, err
        out, berr = b.communicate(timeout=60)
        assert b.returncode == 0 and out.decode() in ("session 'rb': step 3\n", "session 'rb': no changes since "
                                                      "the last step; no step made\n"), berr
        # The process inside sees step 1's view now, and writes on over it.
        assert s("cat T/a.txt") == "a\n" and "b.txt" not in s.names() and "c.txt" not in s.names()
        s("echo d > T/d.txt")
        assert (s.d / "upper" / "d.txt").read_text() == "d\n"
        r = lo("rollback", "rb", "--undo")
        assert r.returncode == 1 and "the session changed since the rollback to step 1" in r.stderr.decode()
        assert "d.txt" in s.names()  # nothing changed, and still writable
        s("rm T/d.txt")
        assert "the rollback is undone (2 steps back)" in ok(lo("rollback", "rb", "--undo"))
        assert s.names() == names and s("cat T/a.txt T/c.txt") == "a2\nc\n"
        # Unknown step: refused, the view unchanged and writable.
        r = lo("rollback", "rb", "9")
        assert r.returncode == 1 and "no step 9" in r.stderr.decode(), r.stderr
        s("echo e > T/e.txt")
        assert s("cat T/e.txt") == "e\n"
    finally:
        s.stop()
    assert {n: digest(layer(lo, "rb", n)) for n in (1, 2)} == before
    ch = {c["path"] for c in status_json(lo, "rb")}
    assert ch == {"a.txt", "b.txt", "c.txt", "e.txt"}, ch
    assert not (Path(lo.target) / "b.txt").exists()


def test_revert_and_fork_of_a_running_session(lo):
    s = Inside(lo, "rv")
    try:
        s("echo x > T/x.txt")
        ok(lo("checkpoint", "rv", "-m", "x"))
        s("echo y > T/y.txt")
        ok(lo("checkpoint", "rv", "-m", "y"))
        s("echo z > T/z.txt")
        before = {n: digest(layer(lo, "rv", n)) for n in (1, 2)}
        assert "step 1 reverted by a new step 3" in ok(lo("revert", "rv", "1"))
        # Step 1 (a.txt and x.txt) taken back inside; the later steps kept.
        assert "x.txt" not in s.names() and "a.txt" not in s.names() and s("cat T/y.txt T/z.txt") == "y\nz\n"
        # A later change to step 2's path: refused, listed, nothing changed.
        s("echo y2 > T/y.txt")
        r = lo("revert", "rv", "2")
        assert r.returncode == 1 and "later changes touched its paths" in r.stderr.decode(), r.stderr
        assert "  y.txt: the live changes\n" in r.stderr.decode(), r.stderr
        s("echo w > T/w.txt")
        assert s("cat T/y.txt T/w.txt") == "y2\nw\n"
        # Fork: the live changes frozen first; the running session goes on.
        ok(lo("fork", "rv", "f1"))
        ok(lo("fork", "rv", "f2", "--at", "2"))
        s("echo after > T/after.txt")
        assert (s.d / "upper" / "after.txt").read_text() == "after\n"
        r = lo("fork", "rv", "f1")
        assert r.returncode == 1 and "session 'f1' exists" in r.stderr.decode()
        assert {n: digest(layer(lo, "rv", n)) for n in (1, 2)} == before
    finally:
        s.stop()
    f1 = {c["path"] for c in status_json(lo, "f1")}
    f2 = {c["path"] for c in status_json(lo, "f2")}
    assert f1 == {"y.txt", "z.txt", "w.txt"}, f1
    assert f2 == {"a.txt", "x.txt", "y.txt"}, f2
    r = lo.run("cat y.txt", session="f1")
    assert r.returncode == 0 and r.stdout == b"y2\n"


def test_a_running_rollback_revert_or_fork_is_refused_under_the_freeze_rule(lo):
    s = Inside(lo, "fr")
    try:
        ok(lo("checkpoint", "fr"))
        s("echo b > T/b.txt")
        s("sh -c 'exec 3>>T/held.txt; exec sleep 30.0177' >/dev/null 2>&1 &")
        # The writer is the sleep once it runs (the shell opened the file
        # before its exec): waited for, not 100 looks at the file, which
        # could end before the background shell ran, or find it not yet the
        # sleep the messages name, on a loaded machine.
        from test_sandbox_core import _pids_with
        deadline = time.monotonic() + 60
        while not _pids_with("sleep\x0030.0177\x00"):
            assert time.monotonic() < deadline, "the writer never ran: %r" % s.names()
            time.sleep(0.02)
        for args, verb in ((["rollback", "fr", "0"], "rollback"), (["revert", "fr", "1"], "revert"),
                           (["fork", "fr", "new"], "fork")):
            r = lo(*args)
            err = r.stderr.decode()
            assert r.returncode == 1 and "(sleep) has " + s.t + "/held.txt open for writing" in err, err
            assert "nothing changed: close it (or let it finish), then %s again" % verb in err, err
        assert not (s.d / "steps" / "0002").exists() and not lo.session_dir("new").exists()
        assert s("cat T/b.txt") == "b\n"
    finally:
        s.stop()


def view(lo, name):
    return {c["path"]: c["kind"] for c in status_json(lo, name)}


def test_a_live_checkpoint_whose_supervisor_is_killed_leaves_the_session_before_or_after(lo):
    for point, after in (("readonly", False), ("changed", True), ("mounted", True)):
        name = "k" + point
        s = Inside(lo, name, env={"LAYOVER_FAULT": "live:%s:1:kill" % point})
        s("echo b > T/b.txt")
        r = lo("checkpoint", name)
        assert r.returncode == 1 and b"without an answer" in r.stderr, r.stderr
        s.p.communicate(timeout=30)  # the sandbox dies with its supervisor
        assert (s.d / "steps" / "0001").is_dir() == after
        assert view(lo, name) == {"a.txt": "added", "b.txt": "added"}
        # A rerun makes the step (before) or finds it made (after); doctor finds nothing half-done.
        r = lo("checkpoint", name)
        assert r.returncode == 0 and r.stdout.decode().endswith("no changes since the last step; no step made\n"
                                                                if after else "step 1\n"), r.stdout
        assert view(lo, name) == {"a.txt": "added", "b.txt": "added"}
        assert b"stack-op" not in lo("doctor").stdout


def test_a_live_freeze_or_rollback_killed_midway_leaves_the_running_session_before_or_after(lo):
    # The kill hits the child that changes the layers (as their owner): the
    # supervisor remounts what is on disk and the command goes on.
    for spec, after in (("live:record", False), ("live:renamed", True), ("rollback:built", False),
                        ("rollback:committed", True)):
        name = spec.replace(":", "-")
        s = Inside(lo, name, env={"LAYOVER_FAULT": spec + ":1:kill"})
        rollback = spec.startswith("rollback")
        if rollback:
            ok(lo("checkpoint", name))
        s("echo b > T/b.txt")
        r = lo(*(["rollback", name, "0"] if rollback else ["checkpoint", name]))
        err = r.stderr.decode()
        assert r.returncode == 1 and "the capture process died" in err, err
        cut = "it was cut short after changing the session's layers: the session runs on what they hold now"
        assert (cut if after or rollback else "; nothing changed") in err, err
        # The session runs on, on the old view (before) or the new one (after), writable.
        want = [] if rollback and after else ["a.txt", "b.txt"]
        assert [n for n in s.names() if n in ("a.txt", "b.txt")] == want, (spec, s.names())
        s("echo c > T/c.txt")
        assert (s.d / "upper" / "c.txt").read_text() == "c\n"
        assert not (s.d / "stack-op").exists() and not (s.d / "steps.rb").exists()
        if not rollback:
            assert (s.d / "steps" / "0001").is_dir() == after
            frozen = digest(s.d / "steps" / "0001") if after else None
        s.stop()
        if not rollback and after:
            assert digest(s.d / "steps" / "0001") == frozen
        assert set(view(lo, name)) == ({"c.txt"} if rollback and after else {"a.txt", "b.txt", "c.txt"})


def test_a_running_revert_killed_midway_leaves_the_session_before_or_after(lo):
    for point, after in (("built", False), ("committed", True)):
        name = "rv-" + point
        s = Inside(lo, name, env={"LAYOVER_FAULT": "revert:%s:1:kill" % point})
        ok(lo("checkpoint", name))
        s("echo b > T/b.txt")
        r = lo("revert", name, "1")
        err = r.stderr.decode()
        assert r.returncode == 1 and "revert of session '%s': the revert was killed" % name in err, err
        assert ("it was cut short after changing the session's layers" if after else "; nothing changed") in err
        # Step 1 (a.txt) taken back (after) or not (before); the live b.txt kept either way, writable.
        assert [n for n in s.names() if n in ("a.txt", "b.txt")] == (["b.txt"] if after else ["a.txt", "b.txt"])
        s("echo c > T/c.txt")
        assert (s.d / "upper" / "c.txt").read_text() == "c\n"
        s.stop()
        assert set(view(lo, name)) == ({"b.txt", "c.txt"} if after else {"a.txt", "b.txt", "c.txt"})
        # A rerun finishes (says so) or does it.
        r = lo("revert", name, "1")
        assert r.returncode == 0 and ("already reverted" if after else "reverted by a new step") in r.stderr.decode()


def test_a_running_fork_killed_midway_creates_nothing_and_the_session_goes_on(lo):
    s = Inside(lo, "fk", env={"LAYOVER_FAULT": "fork:ref:1:kill"})
    try:
        ok(lo("checkpoint", "fk"))
        s("echo b > T/b.txt")
        r = lo("fork", "fk", "new")  # the live b.txt frozen first, then the fork's child killed
        assert r.returncode == 1 and "forking session 'fk': the capture process died" in r.stderr.decode(), r.stderr
        assert not lo.session_dir("new").exists()
        assert not [p for p in lo.session_dir("fk").parent.iterdir() if p.name.startswith(".fork-")]
        s("echo c > T/c.txt")
        assert (s.d / "upper" / "c.txt").read_text() == "c\n" and s("cat T/b.txt") == "b\n"
    finally:
        s.stop()
    assert set(view(lo, "fk")) == {"a.txt", "b.txt", "c.txt"}
    ok(lo("fork", "fk", "new"))  # a rerun (the supervisor gone, with its fault) makes it
    assert set(view(lo, "new")) == {"a.txt", "b.txt", "c.txt"}


PROBE = r"""
import socket, sys
try:
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(sys.argv[1])
    c.send(b'{"op": "rollback", "step": 0}')
    print("reached", c.recv(999))
except OSError as e:
    print("refused", e.errno)
"""


def test_nothing_inside_the_sandbox_can_reach_the_control_socket(lo):
    s = Inside(lo, "sec")
    try:
        ok(lo("checkpoint", "sec"))
        s("echo b > T/b.txt")
        sock = s.d / "control.sock"
        assert sock.exists()
        (s.s / "probe.py").write_text(PROBE)
        out = s("python3 %s %s; ls %s 2>&1; echo $?" % (s.s / "probe.py", sock, s.d))
        assert out.startswith("refused "), out
        assert "control.sock" not in out.split("\n", 1)[1], out
        assert s.names().count("b.txt") == 1 and (s.d / "steps" / "0001").is_dir()
        assert not (s.d / "steps" / "0002").exists() and not (s.d / "rolled-back").exists()
    finally:
        s.stop()


def test_a_second_request_waits_for_the_first_and_gives_up_busy_unserved(lo):
    # The supervisor serves one request at a time. Its first checkpoint stops
    # (SIGSTOP, a fault point) inside the freeze; a fork asked meanwhile gives
    # up after LAYOVER_CONTROL_WAIT seconds with the busy error, and is never
    # served, even once the supervisor goes on.
    import os
    import signal
    from test_apply_atomic import wait_stopped
    s = Inside(lo, "busy", env={"LAYOVER_FAULT": "live:readonly:1:stop"})
    first = None
    try:
        s("echo b > T/b.txt")
        steps = sorted(p.name for p in (s.d / "steps").iterdir())
        first = subprocess.Popen([LAYOVER, "checkpoint", "busy", "-m", "one"], env=lo.env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_stopped(s.p)
        r = subprocess.run([LAYOVER, "fork", "busy", "busy2"], env=dict(lo.env, LAYOVER_CONTROL_WAIT="2"),
                           capture_output=True, timeout=60)
        assert r.returncode == 1, r
        assert (b"the session's supervisor did not answer in 2 seconds (busy with an earlier request?); "
                b"see 'layover log', then try again") in r.stderr, r.stderr
        assert first.poll() is None  # the first still waits for its answer
        assert sorted(p.name for p in (s.d / "steps").iterdir()) == steps
        assert not lo.session_dir("busy2").exists()
    finally:
        os.kill(s.p.pid, signal.SIGCONT)
    try:
        out, err = first.communicate(timeout=60)
        assert first.returncode == 0 and out.decode() == "session 'busy': step 1\n", err
        # A later request is served after the abandoned one would have been.
        s("echo c > T/c.txt")
        r = lo("checkpoint", "busy", "-m", "three")
        assert r.returncode == 0 and r.stdout.decode() == "session 'busy': step 2\n", r.stderr
        r = lo("log", "busy", "--json")
        assert r.returncode == 0, r.stderr
        assert [(x["step"], x["label"]) for x in json.loads(r.stdout)["steps"]] == [(2, "three"), (1, "one")]
        assert not lo.session_dir("busy2").exists()
    finally:
        s.stop()
