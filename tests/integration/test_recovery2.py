"""Crashes, kills and recoveries (recovery2's round): what a killed run or
apply leaves is found, named and whole, never lost and never half done.

- a `run --on-exit discard` whose layover was SIGKILLed is kept, crashed:
  `sessions` and `gc` name it and how to drop it, and neither removes it;
- a first `apply` killed mid-commit and recovered put the originals back
  with new ctimes: the next apply took each one run's exit had not vouched
  for (a file over 16 MiB, any of a crashed session's) for a stale copy, a
  conflict needing --force;
- a rename worker killed mid-copy left its half-made copy in the sandbox's
  view until the run ended: tools saw it, and what the agent moved into it
  was lost with it at the end's sweep."""
import json
import os
import subprocess
import time

from conftest import LAYOVER, kill9_and_reap, snapshot


def _wait(pred, what, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return
        time.sleep(0.01)
    raise AssertionError("timed out waiting for " + what)


def _killed_run(lo, name, script, on_exit):
    """`run SCRIPT` whose layover (the supervisor) is SIGKILLed once the
    script's last change, added.txt, is in the upper layer."""
    args = [LAYOVER, "run", "--target", str(lo.target), "--session", name, "--on-exit", on_exit, "--",
            "/bin/sh", "-c", script + " && echo new > added.txt && exec sleep 600"]
    p = subprocess.Popen(args, env=lo.env, cwd=str(lo.target), stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    added = lo.upper(name) / "added.txt"
    try:
        _wait(lambda: added.exists() and added.read_text() == "new\n", "the command's changes")
    finally:
        kill9_and_reap(p)
    assert p.returncode == -9


def test_a_discarding_run_killed_is_kept_named_and_offered_for_discard_never_removed_unasked(lo):
    before = snapshot(lo.target)
    _killed_run(lo, "dk", "echo changed > notes.txt", "discard")
    d = lo.session_dir("dk")
    assert (d / "upper" / "notes.txt").read_text() == "changed\n"  # on disk, whole
    r = lo("sessions", check=True)
    row = [l for l in r.stdout.decode().splitlines() if l.startswith("dk ")]
    assert len(row) == 1 and row[0].split()[1] == "crashed", r.stdout
    note = ("layover: session 'dk' was to be discarded (run --on-exit discard), but its layover was killed first: "
            "its changes are kept; 'layover status dk' lists them, 'layover discard dk' drops them\n")
    assert r.stderr.decode() == note
    js = json.loads(lo("sessions", "--json", check=True).stdout)
    assert [(s["name"], s["state"], s["on_exit"]) for s in js] == [("dk", "crashed", "discard")]
    # gc names it too, and leaves it (a dry run and a real one).
    for args in (["gc", "--dry-run"], ["gc"]):
        r = lo(*args, check=True)
        assert r.stderr.decode() == note.replace("layover: ", "layover: gc: ", 1), r.stderr
        assert b"dk" not in r.stdout, r.stdout
        assert (d / "upper" / "notes.txt").read_text() == "changed\n"
    st = lo("status", "dk", check=True).stdout.decode()
    assert "M  notes.txt" in st and "A  added.txt" in st, st
    assert snapshot(lo.target) == before  # nothing of it reached the real tree
    # Dropped as offered: gone from the list, in the trash, the note with it.
    lo("discard", "dk", check=True)
    r = lo("sessions", check=True)
    assert r.stdout == b"no sessions\n" and r.stderr == b"", (r.stdout, r.stderr)
    assert b"dk" in lo("sessions", "--trash", check=True).stdout
    assert snapshot(lo.target) == before


def test_a_kept_runs_crash_or_an_ended_discarding_run_gets_no_discard_note(lo):
    _killed_run(lo, "kk", "echo changed > notes.txt", "keep")
    r = lo("sessions", check=True)
    assert b"crashed" in r.stdout and r.stderr == b"", (r.stdout, r.stderr)
    assert json.loads(lo("sessions", "--json", check=True).stdout)[0]["on_exit"] == "keep"
    r = lo.run("echo gone > gone.txt", session="dd", on_exit="discard")
    assert r.returncode == 0, r.stderr
    assert not lo.session_dir("dd").exists()
    assert lo("sessions", check=True).stderr == b""


def _apply_killed_then_recovered(lo, point):
    before = snapshot(lo.target)
    r = lo("apply", "s", "--yes", env={"LAYOVER_FAULT": point + ":kill"})
    assert r.returncode == -9, (r.returncode, r.stderr)
    assert snapshot(lo.target) != before  # half applied: killed where the test means
    r = lo("undo", "--last", "--target", lo.target)
    assert r.returncode == 0 and "reverted an interrupted apply of s" in r.stderr.decode(), r.stderr
    assert snapshot(lo.target) == before  # the originals are back, byte for byte


def test_a_big_file_put_back_by_the_recovery_of_a_killed_first_apply_is_no_stale_copy(lo):
    # Over run's exit's 16 MiB: its exit never read it, so nothing but the
    # apply's own record says the real file is the one the sandbox copied.
    big = lo.target / "big.bin"
    data = os.urandom(17 << 20)
    big.write_bytes(data)
    r = lo.run("echo tail >> big.bin && echo NEW > notes.txt", session="s")
    assert r.returncode == 0, r.stderr
    _apply_killed_then_recovered(lo, "apply:commit:2")  # big.bin committed, notes.txt not
    assert big.read_bytes() == data
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr
    assert b"stale copy" not in r.stderr, r.stderr
    assert big.read_bytes() == data + b"tail\n"
    assert (lo.target / "notes.txt").read_text() == "NEW\n"


def test_a_crashed_sessions_deletion_put_back_by_a_recovery_is_no_stale_copy(lo):
    # A crashed run vouched for nothing at its exit: every original the
    # killed apply moved aside came back with a new ctime.
    (lo.target / "gone.txt").write_text("gone\n")
    _killed_run(lo, "s", "rm gone.txt && echo NEW > notes.txt", "keep")
    _apply_killed_then_recovered(lo, "apply:commit:3")  # added.txt, gone.txt committed; notes.txt not
    assert (lo.target / "gone.txt").read_text() == "gone\n"
    r = lo("apply", "s", "--yes")
    assert r.returncode == 0, r.stderr
    assert not (lo.target / "gone.txt").exists()
    assert (lo.target / "notes.txt").read_text() == "NEW\n"
    assert (lo.target / "added.txt").read_text() == "new\n"


def test_a_real_edit_after_a_recovered_apply_is_still_a_stale_copy(lo):
    # What the apply remembered before its commit is the content the
    # sandbox copied, never whatever is there later.
    (lo.target / "gone.txt").write_text("gone\n")
    _killed_run(lo, "s", "rm gone.txt && echo NEW > notes.txt", "keep")
    _apply_killed_then_recovered(lo, "apply:commit:3")
    (lo.target / "gone.txt").write_text("edited by the user\n")
    r = lo("apply", "s", "--yes")
    assert r.returncode != 0 and b"gone.txt: was changed on the target" in r.stderr, r.stderr
    assert (lo.target / "gone.txt").read_text() == "edited by the user\n"
    assert (lo.target / "notes.txt").read_text() == "one\ntwo\nthree\n"


def test_a_dead_workers_copy_is_never_seen_inside_nor_can_the_agent_lose_work_in_it(lo):
    # The rename worker killed after copying one file of old/ (the fault
    # point): before, its half-made `.layover-rename-ID-TAG/` stayed in the
    # sandbox's view until the run ended. A tool saw it (`git add -A` took
    # it into the index), and a dir the agent moved into it was swept with
    # it at the end: the agent's own work, lost from the session.
    script = ("mv old new; echo mv=$?; ls -a; "
              "for d in .layover-rename-*; do [ -d \"$d\" ] && mkdir keepme && echo precious > keepme/p.txt && "
              "mv keepme \"$d\"/; done; find . -name '.layover-rename-*' | sed 's/^/found /'")
    env = dict(lo.env)
    env["LAYOVER_FAULT"] = "rename:file:1:kill"
    args = [LAYOVER, "run", "--target", str(lo.target), "--session", "w", "--on-exit", "keep", "--",
            "/bin/sh", "-c", "cd '%s' && %s" % (lo.target, script)]
    r = subprocess.run(args, env=env, cwd=str(lo.target), stdin=subprocess.DEVNULL, capture_output=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    out = r.stdout.decode()
    assert "mv=0" in out, out  # mv copied by itself after the worker's EXDEV
    assert ".layover-rename" not in out, out
    up = lo.upper("w")
    assert sorted(os.listdir(up)) == ["new", "old"], os.listdir(up)  # old: its whiteout
    assert (up / "new" / "a.txt").read_text() == "a\n" and (up / "new" / "sub" / "b.txt").read_text() == "b\n"
    lo("apply", "w", "--yes", check=True)
    assert not (lo.target / "old").exists()
    assert (lo.target / "new" / "sub" / "b.txt").read_text() == "b\n"
    assert not [n for n in os.listdir(lo.target) if n.startswith(".layover-rename")]
