"""The rename worker's leftovers (worker2's round): a worker killed at each
point of a directory move leaves the session as the agent saw it, and its
half-made copy (a temporary dir named with the session's key,
helper/store/records/rename_temps.h) never reaches a step, a review or an apply:

- a `checkpoint` (kept or running) after the worker died mid-copy froze the
  temporary dir into the step, where no sweep looked;
- a discarding run's supervisor SIGKILLed left its session crashed (and
  reviewable) without the key, so its leftover was the agent's for good;
- a leftover deeper than PATH_MAX was never swept.

The worker's fault points (LAYOVER_FAULT=rename:POINT:N:kill|stop) pick the
moment: `file` after each file copied, `copied` before the copy is renamed
into place, `placed` after, `emptied` once the old tree is emptied."""
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import LAYOVER, kill9_and_reap, proc_stat

TEMP = re.compile(r"\.layover-rename-[0-9a-f]+-[0-9a-f]{16}$")
TEMP_IN_TEXT = re.compile(r"\.layover-rename-[0-9a-f]+-[0-9a-f]{16}")

# The agent's rename of old/ (a dir of the real tree) to new/, then its view
# of both names, with contents, as it saw it.
RENAME_AND_LOOK = (
    "python3 -c 'import os\n"
    "try: os.rename(\"old\", \"new\"); print(\"rename 0\", flush=True)\n"
    "except OSError as e: print(\"rename\", e.errno, flush=True)\n"
    "for top in (\"old\", \"new\"):\n"
    "    for d, dirs, files in os.walk(top):\n"
    "        dirs.sort()\n"
    "        print(\"D\", d, flush=True)\n"
    "        for f in sorted(files): print(\"F\", os.path.join(d, f), open(os.path.join(d, f)).read().strip())\n"
    "print(\"seen\", sorted(n for n in os.listdir(\".\") if n.startswith(\".layover-rename\")))\n"
    "'")


def _temps_fd(root):
    """Every dir under root named as the worker names its copies, found by
    a walk of dir fds (a path may be longer than PATH_MAX)."""
    found = []
    if not os.path.isdir(root):
        return found
    for dirpath, dirnames, _, _ in os.fwalk(root):
        found += [os.path.join(dirpath, d) for d in dirnames if TEMP.match(d)]
    return found


def _wait(pred, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.01)
    raise AssertionError("timed out waiting for " + what)


def _stopped(pid):
    return proc_stat(pid)[:1] in (["T"], ["t"])


def _gone(pid):
    return proc_stat(pid)[:1] in ([], ["Z"], ["X"])


def _start(lo, session, script, fault, on_exit="keep", stdin=subprocess.DEVNULL):
    env = dict(lo.env)
    env["LAYOVER_FAULT"] = fault
    args = [LAYOVER, "run", "--target", str(lo.target), "--session", session, "--on-exit", on_exit, "--",
            "/bin/sh", "-c", script]
    return subprocess.Popen(args, env=env, cwd=str(lo.target), stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)


def _stopped_worker(p):
    """The worker of run `p`, once its fault point stopped it (SIGSTOP): the
    supervisor's stopped child (a discarding run has a remover child too)."""
    def find():
        for pid in filter(str.isdigit, os.listdir("/proc")):
            fields = proc_stat(pid)
            if fields and int(fields[1]) == p.pid and fields[0] in ("T", "t"):
                return int(pid)
        return None
    return _wait(find, "the rename worker to stop at its fault point")


def _sigkill_with_worker_stopped(p):
    """The run P's supervisor SIGKILLed once its worker stopped at its fault
    point; back when the worker died too (PDEATHSIG)."""
    try:
        worker = _stopped_worker(p)
    finally:
        kill9_and_reap(p)
    _wait(lambda: _gone(worker), "the worker to die")


def _kill_supervisor_with_worker_stopped(lo, session, script, on_exit="keep"):
    """run's supervisor SIGKILLed while its worker, stopped mid-copy, holds
    the call; the worker then dies too (PDEATHSIG). The leftover is on disk."""
    _sigkill_with_worker_stopped(_start(lo, session, script, "rename:file:1:stop", on_exit=on_exit))
    left = _temps_fd(lo.session_dir(session))
    assert left, "the kill left no temporary dir"
    return left


def _assert_no_temp_reviewed(lo, name):
    st = lo("status", name, check=True).stdout.decode()
    assert not TEMP_IN_TEXT.search(st), st
    js = lo("status", name, "--json", check=True).stdout.decode()
    assert not TEMP_IN_TEXT.search(js), js
    out = Path(lo.state).parent / (name + ".tar.zst")
    lo("save", name, "-o", out, check=True)
    listing = subprocess.run(["tar", "--zstd", "-tf", str(out)], capture_output=True, check=True).stdout.decode()
    assert not TEMP_IN_TEXT.search(listing), listing


def test_a_checkpoint_after_a_killed_supervisor_never_freezes_its_leftover(lo):
    _kill_supervisor_with_worker_stopped(lo, "ck", "cd '%s' && echo kept > kept.txt && %s" % (lo.target,
                                                                                             RENAME_AND_LOOK))
    # The checkpoint comes first: no status, no resume swept before it.
    r = lo("checkpoint", "ck", "-m", "after the kill", check=True)
    assert b"step 1" in r.stdout, r.stdout  # kept.txt
    assert _temps_fd(lo.session_dir("ck")) == [], "frozen or left: %s" % _temps_fd(lo.session_dir("ck"))
    _assert_no_temp_reviewed(lo, "ck")
    # The real tree after an apply: as before (the move never happened).
    lo("apply", "ck", "--yes", check=True)
    assert (lo.target / "old" / "a.txt").read_text() == "a\n"
    assert (lo.target / "old" / "sub" / "b.txt").read_text() == "b\n"
    assert not (lo.target / "new").exists()
    assert (lo.target / "kept.txt").read_text() == "kept\n"
    assert not [n for n in os.listdir(lo.target) if n.startswith(".layover-rename")]


def test_a_leftover_alone_makes_no_step(lo):
    _kill_supervisor_with_worker_stopped(lo, "alone", "cd '%s' && %s" % (lo.target, RENAME_AND_LOOK))
    r = lo("checkpoint", "alone", check=True)
    assert b"no changes since the last step; no step made" in r.stdout, r.stdout
    assert not (lo.session_dir("alone") / "steps" / "0001").exists()
    assert _temps_fd(lo.session_dir("alone")) == []


def test_a_live_checkpoint_after_the_worker_died_mid_copy_never_freezes_its_leftover(lo):
    # The worker kills itself after its first file; the command then waits
    # in / (the freeze rule) for the test's line, and looks again.
    script = ("cd '%s' && %s && cd / && echo waiting > '%s/waiting' && read line && cd '%s' && "
              "ls -a && ls -a ..") % (lo.target, RENAME_AND_LOOK, lo.target, lo.target)
    p = _start(lo, "live", script, "rename:file:1:kill", stdin=subprocess.PIPE)
    try:
        _wait(lambda: (lo.upper("live") / "waiting").exists(), "the command's rename")
        # Its successor removed the copy before the call got EXDEV (recovery2); a
        # copy it could not remove is what the checkpoint's sweep is for.
        assert not _temps_fd(lo.upper("live")), _temps_fd(lo.upper("live"))
        r = lo("checkpoint", "live", "-m", "live", check=True)
        assert b"step 1" in r.stdout, r.stdout
        assert _temps_fd(lo.session_dir("live")) == [], _temps_fd(lo.session_dir("live"))
        out, err = p.communicate(b"go\n", timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    text = out.decode()
    assert "rename 18" in text, text  # EXDEV: the worker died with the call in hand
    after = text.split("seen", 1)[1]
    assert not TEMP_IN_TEXT.search(after.split("\n", 1)[1]), text  # gone from the agent's view after the step
    assert _temps_fd(lo.session_dir("live")) == []
    _assert_no_temp_reviewed(lo, "live")


def test_a_checkpoint_is_refused_while_the_worker_copies_and_works_after(lo):
    script = "cd '%s' && %s && cd / && echo waiting > '%s/waiting' && read line" % (lo.target, RENAME_AND_LOOK,
                                                                                   lo.target)
    p = _start(lo, "busy", script, "rename:file:1:stop", stdin=subprocess.PIPE)
    try:
        worker = _stopped_worker(p)
        r = lo("checkpoint", "busy")
        assert r.returncode == 1, (r.stdout, r.stderr)
        assert b"a directory rename in session 'busy' is being copied; nothing changed: let it finish, then " \
               b"checkpoint again" in r.stderr, r.stderr
        os.kill(worker, signal.SIGCONT)
        _wait(lambda: (lo.upper("busy") / "waiting").exists(), "the move to end")
        assert not _temps_fd(lo.upper("busy"))
        r = lo("checkpoint", "busy", check=True)
        out, err = p.communicate(b"go\n", timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 0, err
    assert "rename 0" in out.decode(), out
    assert _temps_fd(lo.session_dir("busy")) == []
    lo("apply", "busy", "--yes", check=True)
    assert (lo.target / "new" / "a.txt").read_text() == "a\n"
    assert (lo.target / "new" / "sub" / "b.txt").read_text() == "b\n"
    assert not (lo.target / "old").exists()


def test_a_discarding_runs_killed_supervisor_leaves_a_leftover_the_next_sweep_knows(lo):
    _kill_supervisor_with_worker_stopped(lo, "dis", "cd '%s' && %s" % (lo.target, RENAME_AND_LOOK),
                                         on_exit="discard")
    d = lo.session_dir("dis")
    assert (d / "rename-temps").exists()  # the key, on disk as for a kept run
    assert b"crashed" in lo("sessions", check=True).stdout
    _assert_no_temp_reviewed(lo, "dis")
    assert _temps_fd(d) == []
    assert not (d / "rename-temps").exists()  # swept whole: the key goes
    lo("discard", "dis", "--now", check=True)
    assert not d.exists()


def test_a_leftover_deeper_than_path_max_is_swept(lo):
    # The agent's own deep tree (its path > PATH_MAX), into which it moves
    # old/ by dir fds; the worker stops mid-copy and its supervisor is killed.
    script = ("cd '%s' && python3 -c 'import os\n"
              "fd = os.open(\".\", os.O_RDONLY)\n"
              "for i in range(32):\n"
              "    name = (\"d%%02d\" %% i) * 50\n"
              "    os.mkdir(name, dir_fd=fd)\n"
              "    nfd = os.open(name, os.O_RDONLY, dir_fd=fd); os.close(fd); fd = nfd\n"
              "t = os.open(\".\", os.O_RDONLY)\n"
              "os.rename(\"old\", \"moved\", src_dir_fd=t, dst_dir_fd=fd)\n"
              "'") % lo.target
    left = _kill_supervisor_with_worker_stopped(lo, "deep", script)
    assert len(left[0]) > 4096
    d = lo.session_dir("deep")
    r = lo("status", "deep")
    assert not TEMP_IN_TEXT.search(r.stdout.decode()), r.stdout
    assert _temps_fd(d) == [], "not swept: %d bytes deep" % len(left[0])
    assert not (d / "rename-temps").exists()


@pytest.mark.parametrize("point,view", [
    ("file:1", "old"),      # mid-copy: the old tree whole, no new one
    ("copied:1", "old"),    # the copy complete, not in place
    ("placed:1", "both"),   # in place, the old tree not yet removed
    ("emptied:1", "new"),   # the old tree emptied, its dir left
])
def test_a_worker_killed_at_each_point_leaves_what_the_agent_saw(lo, point, view):
    name = "pt" + point.split(":")[0]
    p = _start(lo, name, "cd '%s' && %s" % (lo.target, RENAME_AND_LOOK), "rename:%s:kill" % point)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, err
    text = out.decode()
    assert "rename 18" in text, text  # EXDEV: the call in hand when the worker died
    # Its half-made copy is never seen inside: the worker's successor removed
    # it before the call got EXDEV (recovery2; it was seen until the run ended).
    assert not TEMP_IN_TEXT.search(text.split("seen", 1)[1]), text
    seen = [ln for ln in text.splitlines() if ln.startswith(("D ", "F "))]
    old = ["D old", "F old/a.txt a", "D old/sub", "F old/sub/b.txt b"]
    new = ["D new", "F new/a.txt a", "D new/sub", "F new/sub/b.txt b"]
    want = {"old": old, "both": old + new, "new": ["D old"] + new}[view]
    assert seen == want, text
    if view == "old":  # nothing changed: no session kept, the real tree as it was
        assert not lo.session_dir(name).exists()
    else:
        assert _temps_fd(lo.session_dir(name)) == []
        _assert_no_temp_reviewed(lo, name)
        # The real tree after an apply is the agent's view, file by file.
        lo("apply", name, "--yes", check=True)
    real = _real_view(lo.target)
    assert real == want, real
    assert not [n for n in os.listdir(lo.target) if n.startswith(".layover-rename")]


def _real_view(target):
    real = []
    for top in ("old", "new"):
        for d, dirs, files in os.walk(target / top):
            dirs.sort()
            rel = os.path.relpath(d, target)
            real.append("D " + rel)
            real += ["F %s %s" % (os.path.join(rel, f), (Path(d) / f).read_text().strip()) for f in sorted(files)]
    return real


@pytest.mark.parametrize("point,view", [
    ("file:1", "old"),
    ("copied:1", "old"),
    ("placed:1", "both"),
    ("emptied:1", "new"),
])
def test_a_supervisor_killed_while_its_worker_stops_at_each_point_leaves_a_session_that_applies_right(
        lo, point, view):
    name = "sk" + point.split(":")[0]
    script = "cd '%s' && echo kept > kept.txt && %s" % (lo.target, RENAME_AND_LOOK)
    _sigkill_with_worker_stopped(_start(lo, name, script, "rename:%s:stop" % point))
    _assert_no_temp_reviewed(lo, name)
    assert _temps_fd(lo.session_dir(name)) == []
    lo("apply", name, "--yes", check=True)
    old = ["D old", "F old/a.txt a", "D old/sub", "F old/sub/b.txt b"]
    new = ["D new", "F new/a.txt a", "D new/sub", "F new/sub/b.txt b"]
    assert _real_view(lo.target) == {"old": old, "both": old + new, "new": ["D old"] + new}[view]
    assert (lo.target / "kept.txt").read_text() == "kept\n"
    assert not [n for n in os.listdir(lo.target) if n.startswith(".layover-rename")]
