"""The attack pass of 27 Nov on kills and signals (attack24): each verb
killed at points of its work, then the target and the session looked at."""
import json
import os
import shutil
import signal
import subprocess
import time

import pytest

from conftest import LAYOVER, proc_stat, snapshot


def _session(lo, cmd="echo NEW > notes.txt; echo more > docs/readme.txt; echo added > added.txt"):
    r = lo.run(cmd, session="s")
    assert r.returncode == 0, r.stderr


def _killed_apply(lo, point):
    """`apply s --yes` SIGKILLed at the fault point `point` (apply:commit:2: the first change committed)."""
    r = lo("apply", "s", "--yes", env={"LAYOVER_FAULT": point + ":kill"})
    assert r.returncode == -9, (r.returncode, r.stderr)


def test_undo_last_takes_back_an_apply_killed_mid_commit_and_undo_list_names_it(lo, home):
    # Found by attack24: an apply killed mid-commit (the target half
    # applied, `.layover-tmp.*` staged entries in it) and no apply before it
    # on that tree: `undo --list` said "no undo records" and `undo --last`
    # "nothing was applied there (or it was undone already)", exit 1; only
    # another apply recovered it. Now --list names the pending recovery and
    # --last is it.
    _session(lo)
    before = snapshot(home)
    _killed_apply(lo, "apply:commit:2")
    assert snapshot(home) != before  # half applied: the test kills where it means to
    r = lo("undo", "--list", "--target", home)
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode().count("\n") == 1, r.stderr
    assert ("an apply or undo on %s was interrupted, or is running now; 'layover undo --last --target %s' takes it "
            "back" % (home, home)) in r.stderr.decode()
    assert snapshot(home) != before  # --list changes nothing
    r = lo("undo", "--last", "--target", home)
    assert r.returncode == 0, r.stderr
    assert "layover: undo: reverted an interrupted apply of s" in r.stderr.decode(), r.stderr
    assert snapshot(home) == before
    # Nothing pending now: the next --list is plain, --last has nothing to undo.
    r = lo("undo", "--list", "--target", home)
    assert r.returncode == 0 and r.stderr == b"", r.stderr
    assert lo("undo", "--last", "--target", home).returncode == 1
    # The session still holds every change, and applies whole.
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr
    assert (home / "notes.txt").read_text() == "NEW\n" and (home / "added.txt").read_text() == "added\n"


def test_undo_last_json_after_a_killed_apply_reports_the_recovery(lo, home):
    _session(lo)
    before = snapshot(home)
    _killed_apply(lo, "apply:commit:2")
    r = lo("undo", "--last", "--target", home, "--json")
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["error"] is None and out["recovered"].startswith("reverted an interrupted apply of s"), out
    assert snapshot(home) == before


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_ctrl_c_during_undo_lasts_recovery_waits_for_its_end_and_says_it_finished(lo, home, sig):
    # leftovers2: `undo --last` recovering a killed apply died at a Ctrl+C halfway, the tree half
    # reverted (the journal kept, so the next run finished it). As apply and undo do, the recovery
    # holds the signal until the tree is whole, says so, then dies by it.
    _session(lo)
    before = snapshot(home)
    _killed_apply(lo, "apply:commit:3")
    p = subprocess.Popen([LAYOVER, "undo", "--last", "--target", str(home)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         env=dict(lo.env, LAYOVER_FAULT="apply:revert:1:stop"))
    try:
        assert _wait_stopped(p), p.communicate()
        os.kill(p.pid, sig)  # delivered when it goes on
    finally:
        os.kill(p.pid, signal.SIGCONT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == -sig, (p.returncode, err)
    err = err.decode()
    assert "layover: undo: reverted an interrupted apply of s" in err, err
    assert "layover: undo: interrupted; the recovery finished first: the target is whole" in err, err
    assert snapshot(home) == before
    r = lo("undo", "--list", "--target", home)
    assert r.returncode == 0 and r.stderr == b"", r.stderr


def test_undo_last_after_an_apply_killed_once_its_record_was_written_undoes_that_apply(lo, home):
    # The apply had finished (undo.json written): --last then means that apply.
    _session(lo)
    before = snapshot(home)
    _killed_apply(lo, "apply:recorded:1")
    r = lo("undo", "--last", "--target", home)
    assert r.returncode == 0, r.stderr
    assert "an interrupted apply of s had finished; its undo record is " in r.stderr.decode(), r.stderr
    assert snapshot(home) == before


def test_undo_last_dry_run_never_recovers(lo, home):
    _session(lo)
    _killed_apply(lo, "apply:commit:2")
    half = snapshot(home)
    lo("undo", "--last", "--target", home, "--dry-run")
    assert snapshot(home) == half


def _gc_killed_at_unlink(lo, n):
    """`gc --older-than 0m` SIGKILLed by strace at its n-th unlinkat (mid-removal)."""
    if not shutil.which("strace"):
        pytest.fail("strace not found (it kills gc mid-removal); fix: make deps")
    r = subprocess.run(["strace", "-qq", "-o", "/dev/null", "-e", "inject=unlinkat:signal=SIGKILL:when=%d" % n,
                        LAYOVER, "gc", "--older-than", "0m"], capture_output=True, timeout=120, env=lo.env,
                       cwd=str(lo.target), stdin=subprocess.DEVNULL)
    if b"ptrace" in r.stderr:
        pytest.fail("strace cannot trace here: " + r.stderr.decode(errors="replace"))
    return r


def test_a_gc_killed_while_removing_a_session_leaves_no_half_session_in_sessions(lo, home):
    # Found by attack24: gc removed a session in place, so a kill part way
    # left sessions/NAME without its meta.json (or with it and half its
    # upper): listed by nothing, swept by nothing, its name taken ("exists
    # without metadata"). Now it is moved into STATE/deleting/ first, as
    # `discard --now` does, and the next gc sweeps what a killed one left.
    r = lo.run("mkdir many; for i in $(seq 1 60); do echo $i > many/f$i; done", session="s")
    assert r.returncode == 0, r.stderr
    r = _gc_killed_at_unlink(lo, 10)
    assert r.returncode in (-9, 137), (r.returncode, r.stderr)  # strace dies by the signal too
    sessions = lo.session_dir("s").parent
    assert sorted(os.listdir(sessions)) == [], os.listdir(sessions)
    left = os.listdir(lo.state / "deleting")
    assert len(left) == 1 and left[0].startswith("s.gc."), left
    # The name is free again.
    r = lo.run("echo again > again.txt", session="s")
    assert r.returncode == 0, r.stderr
    assert lo("status", "s").returncode == 0
    # A later gc sweeps the rest once no remover holds it and it is a minute
    # old (purge_deleting; ctime, which a test cannot set back): not waited for here.


def _wait_stopped(p, timeout=60):
    """True once `p` stopped itself (a LAYOVER_FAULT ...:stop), False if it exited first."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if p.poll() is not None:
            return False
        if proc_stat(p.pid)[0] == "T":
            return True
        time.sleep(0.01)
    raise AssertionError("the verb neither stopped nor exited")


def test_a_run_resuming_a_session_while_discard_moves_it_to_the_trash_is_refused(lo, home):
    # Found by attack24: discard checked that the session was not running,
    # then renamed it into the trash; a `run --session` that resumed it in
    # between ran its command in a session moved into the trash under it,
    # and its exit failed ("the session's changes are intact in
    # sessions/NAME", a path gone). Now discard holds the session's lock
    # across the rename, and a lock taken on a dir moved away is refused.
    _session(lo, "echo one > one.txt")
    p = subprocess.Popen([LAYOVER, "discard", "s"], env=dict(lo.env, LAYOVER_FAULT="discard:locked:1:stop"),
                         cwd=str(lo.target), stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        stopped = _wait_stopped(p)
        r = lo.run("echo two > two.txt", session="s")
    finally:
        if p.poll() is None:
            os.kill(p.pid, signal.SIGCONT)
        out, err = p.communicate(timeout=60)
    assert stopped, err
    assert p.returncode == 0, err
    assert r.returncode == 125, r.stderr
    assert b"session 's' is in use by another layover verb (discard, checkpoint, gc...); retry once it ends" \
        in r.stderr, r.stderr
    # The discarded session is whole in the trash, and the refused run wrote nothing anywhere.
    assert os.listdir(lo.state / "trash") == ["s"]
    assert lo("restore", "s").returncode == 0
    r = lo("status", "s", "--json")
    assert r.returncode == 0, r.stderr
    assert sorted(c["path"] for c in json.loads(r.stdout)) == ["one.txt"]
    assert not (home / "two.txt").exists()


def test_an_apply_whose_undo_store_dir_cannot_be_made_durable_applies_nothing(lo, home):
    # Found by attack24 (strace's fault injection): the fsync of STATE/undo
    # after making the target's DEV-INO dir in it was not checked, so with an
    # EIO there the apply went on and moved the originals into a dir whose
    # name might not survive a crash. Now it fails the apply, which rolls back.
    if not shutil.which("strace"):
        pytest.fail("strace not found (it fails one fsync); fix: make deps")
    _session(lo)
    before = snapshot(home)
    undo = lo.state / "undo"
    undo.mkdir(mode=0o700)  # -P below names it: it must be there when strace starts
    r = subprocess.run(["strace", "-f", "-qq", "-o", "/dev/null", "-P", str(undo), "-e", "trace=fsync",
                        "-e", "inject=fsync:error=EIO", LAYOVER, "apply", "s", "--yes"], capture_output=True,
                       timeout=120, env=lo.env, cwd=str(lo.target), stdin=subprocess.DEVNULL)
    if b"ptrace" in r.stderr:
        pytest.fail("strace cannot trace here: " + r.stderr.decode(errors="replace"))
    assert r.returncode == 1, r.stderr
    assert b"creating the undo store: fsync " in r.stderr and b"Input/output error; nothing was applied" in r.stderr
    assert snapshot(home) == before
    assert lo("apply", "s", "--yes").returncode == 0
    assert (home / "notes.txt").read_text() == "NEW\n"
    r = lo("undo", "--last", "--target", home)
    assert r.returncode == 0, r.stderr
    assert snapshot(home) == before


def test_doctor_names_an_apply_killed_on_the_target_and_fix_takes_it_back(lo, home):
    _session(lo)
    before = snapshot(home)
    _killed_apply(lo, "apply:commit:2")
    r = lo("doctor", "--target", home)
    assert r.returncode == 1
    assert ("FAIL  an apply or undo on %s was interrupted: 'layover doctor --fix --target %s' (or 'layover undo "
            "--last --target %s') takes it back" % (home, home, home)) in r.stdout.decode(), r.stdout
    r = lo("doctor", "--target", home, "--fix")
    assert "FIXED reverted an interrupted apply of s" in r.stdout.decode(), r.stdout
    assert snapshot(home) == before
    assert "was interrupted" not in lo("doctor", "--target", home).stdout.decode()


def test_a_run_over_a_tree_an_apply_was_killed_on_says_so_and_how_to_take_it_back(lo, home):
    # Found by attack24: nothing told a new run's user that the tree it
    # overlays is half applied (the command saw `.layover-tmp.*` and half
    # the changes).
    _session(lo)
    before = snapshot(home)
    _killed_apply(lo, "apply:commit:2")
    r = lo.run("true", session="t")
    assert r.returncode == 0, r.stderr
    assert ("layover: warning: an apply or undo on %s was interrupted (or is running now), and this run sees the "
            "tree half done: 'layover undo --last --target %s' takes an interrupted one back" % (home, home)) \
        in r.stderr.decode(), r.stderr
    assert lo("undo", "--last", "--target", home).returncode == 0
    assert snapshot(home) == before
    assert b"was interrupted" not in lo.run("true", session="t").stderr


def test_undo_of_a_record_a_killed_gc_was_removing_never_says_restored_for_what_it_did_not(lo, home):
    # Found by attack24: gc removed an undo record's store in place, so a
    # kill part way left it listed whole ("100 PATHS") with most originals
    # gone, and `undo --last` said "restored 100 path(s)" while 59 files
    # kept the applied content (a missing original reads as one restored
    # already, which recovery needs). Now the store stops being a record
    # first: moved into STATE/deleting/ (a store in the target: its undo.json removed first).
    if not shutil.which("strace"):
        pytest.fail("strace not found (it kills gc mid-removal); fix: make deps")
    (home / "many").mkdir()
    for i in range(100):
        (home / "many" / ("f%d" % i)).write_text("%d\n" % i)
    r = lo.run("for i in $(seq 0 99); do echo new$i > many/f$i; done", session="s")
    assert r.returncode == 0, r.stderr
    assert lo("apply", "s", "--yes").returncode == 0
    r = subprocess.run(["strace", "-qq", "-o", "/dev/null", "-e", "inject=unlinkat:signal=SIGKILL:when=40",
                        LAYOVER, "gc", "--keep-undo", "0", "--keep-undo-days", "0"], capture_output=True,
                       timeout=120, env=lo.env, cwd=str(lo.target), stdin=subprocess.DEVNULL)
    if b"ptrace" in r.stderr:
        pytest.fail("strace cannot trace here: " + r.stderr.decode(errors="replace"))
    assert r.returncode in (-9, 137), (r.returncode, r.stderr)
    r = lo("undo", "--last", "--target", home)
    restored = sum((home / "many" / ("f%d" % i)).read_text() == "%d\n" % i for i in range(100))
    assert r.returncode != 0 or restored == 100, (r.stdout, r.stderr, restored)
    assert r.returncode == 1 and restored == 0, (r.stdout, r.stderr)
    assert b"no undo record for" in r.stderr, r.stderr  # gc's removal stands
    assert os.listdir(lo.state / "deleting")  # what the kill left, for the next gc


def test_reapplying_a_dir_deletion_after_an_undo_or_a_recovery_is_no_stale_copy_unless_the_dir_changed(lo, home):
    # leftovers2: apply -> undo -> apply of a session deleting a dir (or a killed apply recovered, then
    # apply) was "dd: was changed on the target after the sandbox's version was made (stale copy)": the undo's
    # rename back moves the dir's ctime past the copy-up. The apply remembers the dir's subtree (names,
    # types, modes, sizes, contents); a dir holding just that again is no conflict; one changed inside is.
    (home / "dd" / "sub").mkdir(parents=True)
    (home / "dd" / "a.txt").write_text("a\n")
    (home / "dd" / "sub" / "b.txt").write_text("b\n")
    os.symlink("a.txt", str(home / "dd" / "ln"))
    r = lo.run("rm -rf dd; echo x > x.txt", session="s")
    assert r.returncode == 0, r.stderr
    before = snapshot(home)
    for _ in range(2):
        r = lo("apply", "s", "--yes")
        assert r.returncode == 0, r.stderr
        assert not (home / "dd").exists()
        r = lo("undo", "--last", "--target", home)
        assert r.returncode == 0, r.stderr
        assert snapshot(home) == before
    # A killed apply recovered, then apply again.
    _killed_apply(lo, "apply:commit:2")
    r = lo("undo", "--last", "--target", home)
    assert r.returncode == 0 and "reverted an interrupted apply" in r.stderr.decode(), r.stderr
    assert snapshot(home) == before
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr
    assert lo("undo", "--last", "--target", home).returncode == 0
    # Changed inside since: a conflict, whatever the undo left known.
    for change in (lambda: (home / "dd" / "new.txt").write_text("new\n"),
                   lambda: (home / "dd" / "sub" / "b.txt").write_text("B\n"),
                   lambda: os.chmod(str(home / "dd" / "a.txt"), 0o600)):
        snap = snapshot(home)
        change()
        r = lo("apply", "s", "--yes")
        assert r.returncode != 0 and b"dd" in r.stderr, r.stderr
        assert (home / "dd").is_dir()
        shutil.rmtree(str(home / "dd"))
        (home / "dd" / "sub").mkdir(parents=True)
        (home / "dd" / "a.txt").write_text("a\n")
        (home / "dd" / "sub" / "b.txt").write_text("b\n")
        os.symlink("a.txt", str(home / "dd" / "ln"))


def test_applying_again_after_the_first_apply_of_a_dir_deletion_was_killed_and_recovered(lo, home):
    # leftovers2: the killed apply never remembered what it saw; its recovery renamed dd back.
    (home / "dd").mkdir()
    (home / "dd" / "a.txt").write_text("a\n")
    (home / "notes.txt").write_text("old\n")
    r = lo.run("rm -rf dd; echo new > notes.txt; echo x > x.txt", session="s")
    assert r.returncode == 0, r.stderr
    before = snapshot(home)
    _killed_apply(lo, "apply:commit:3")
    r = lo("undo", "--last", "--target", home)
    assert r.returncode == 0 and "reverted an interrupted apply" in r.stderr.decode(), r.stderr
    assert snapshot(home) == before
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr
    assert not (home / "dd").exists() and (home / "notes.txt").read_text() == "new\n"
