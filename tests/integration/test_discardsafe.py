"""A `run --on-exit discard` notes no renames and links (they cost it ~150 us
each) and vouches for nothing at its exit: it was to be dropped. When its
layover is SIGKILLed first (or a limit stops it), the session stays,
crashed (or stopped), and can be applied
(docs/cli.md, "sessions"). Its stale check must not be the weaker for it
(docs/security.md, invariant 6): a host edit hidden behind the agent's
`mv a b`, or a real file the host deleted under the agent's copy, is a
conflict, never overwritten or brought back, by apply, a saved patch, a
resume or a fork of it."""
import os
import subprocess
import time

from apply_util import apply_json as apply, status_json as status, tree
from conftest import LAYOVER


def _killed_discarding_run(lo, name, before, after, host, stopped=False):
    """`run --on-exit discard` of `before`, then (once its upper holds
    `ready`) host(), then `after`; its layover is SIGKILLed once `done` is
    in the upper layer (stopped: its --max-size stops it instead)."""
    end = "for i in 1 2 3 4 5 6; do head -c 600000 /dev/zero > big$i; done" if stopped else "echo > done"
    script = "cd '%s' && %s && echo > ready && read go && %s && %s && exec sleep 600" % (
        lo.target, before, after, end)
    limit = ["--max-size", "1M"] if stopped else []
    p = subprocess.Popen([LAYOVER, "run", "--target", str(lo.target), "--on-exit", "discard", "--session", name,
                          *limit, "--", "/bin/sh", "-c", script], env=lo.env, cwd=str(lo.target),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if stopped:
        _wait_for(lo, name, "ready", p)
        host()
        out, err = p.communicate(b"go\n", timeout=60)
        assert p.returncode == 125 and b"--max-size 1M reached" in err, (p.returncode, err)
        assert [s for s in lo("sessions", check=True).stdout.decode().splitlines() if s.startswith(name + " ")]
        return
    try:
        for marker in ("ready", "done"):
            _wait_for(lo, name, marker, p)
            if marker == "ready":
                host()
                p.stdin.write(b"go\n")
                p.stdin.flush()
    finally:
        p.kill()  # SIGKILL: the layover (the supervisor) of a discarding run, as a crash would
        p.communicate(timeout=60)
    assert p.returncode == -9
    assert [s for s in lo("sessions", check=True).stdout.decode().splitlines() if s.startswith(name + " ")][0].split()[1] \
        == "crashed"


def _wait_for(lo, name, marker, p):
    path = lo.upper(name) / marker
    deadline = time.monotonic() + 30
    while not path.exists() and time.monotonic() < deadline and p.poll() is None:
        time.sleep(0.02)
    assert path.exists(), (marker, p.poll())


def _host_edits(lo):
    def host():
        time.sleep(0.05)  # the edit's ctime a tick after what the run had copied (the copy's own coarse clock)
        (lo.target / "notes.txt").write_text("the host's edit during the run\n")
        time.sleep(0.05)  # and the agent's next copy-up a tick after the edit
    return host


def test_a_killed_discarding_runs_mv_over_a_file_the_host_edited_is_a_conflict_never_overwritten(lo, tmp_path):
    """The agent copies notes.txt up (or never touches it), the host edits
    it, then the agent copies up another real file and renames it over
    notes.txt (`mv a b`): the new copy carries the other file's copy-up
    mark and birth, after the host's edit. A kept run notes what the rename
    replaced; a discarding run does not, so its copies are judged from when
    its layer began."""
    for name, before in (("edited", "echo sandbox >> notes.txt"), ("untouched", "true")):
        (lo.target / "notes.default").write_text("defaults\n")
        (lo.target / "notes.txt").write_text("one\ntwo\nthree\n")
        _killed_discarding_run(lo, name, before, "echo tuned >> notes.default && mv notes.default notes.txt",
                               _host_edits(lo))
        assert (lo.upper(name) / "notes.txt").read_text() == "defaults\ntuned\n"
        assert status(lo, name)["notes.txt"]["stale"], name
        before_tree = tree(lo.target, mtimes=True)
        r, res = apply(lo, name)
        assert r.returncode == 1 and [c["path"] for c in res["conflicts"]] == ["notes.txt"], (name, res)
        assert (lo.target / "notes.txt").read_text() == "the host's edit during the run\n"
        assert tree(lo.target, mtimes=True) == before_tree  # nothing written
        # A patch saved from it carries the stale base: refused elsewhere too.
        patch = tmp_path / (name + ".tar.zst")
        lo("save", name, "-o", patch, check=True)
        r = lo("apply", patch, "--yes", "--target", lo.target)
        assert r.returncode == 1 and b"notes.txt" in r.stderr, r.stderr
        assert tree(lo.target, mtimes=True) == before_tree
        # Resumed by a kept run, or forked: still a conflict (the unnoted run is in a step now).
        r = lo.run("true", session=name)
        assert r.returncode == 0, r.stderr
        lo("fork", name, name + "-fork", check=True)
        for s in (name, name + "-fork"):
            r, res = apply(lo, s)
            assert r.returncode == 1 and [c["path"] for c in res["conflicts"]] == ["notes.txt"], (s, res)
        assert (lo.target / "notes.txt").read_text() == "the host's edit during the run\n"
        # --force applies it: the user's choice.
        r, res = apply(lo, name, "--force")
        assert r.returncode == 0, res
        assert (lo.target / "notes.txt").read_text() == "defaults\ntuned\n"
        assert not (lo.target / "notes.default").exists()
        lo("discard", name + "-fork", check=True)


def test_a_real_file_the_host_deletes_under_a_killed_discarding_runs_copy_does_not_come_back(lo):
    """The agent edits notes.txt (a copy made in place), the host deletes
    the real file while the command runs: no run's exit knew its content, so
    only the copy's place tells it was the real file's; the apply must not
    bring it back."""
    def host():
        os.remove(lo.target / "notes.txt")
    _killed_discarding_run(lo, "gone", "echo sandbox >> notes.txt", "echo new > fresh.txt", host)
    assert status(lo, "gone")["notes.txt"]["stale"]
    before = tree(lo.target, mtimes=True)
    r, res = apply(lo, "gone")
    assert r.returncode == 1 and [c["path"] for c in res["conflicts"]] == ["notes.txt"], res
    assert "removed from the target" in res["conflicts"][0]["reason"], res
    assert tree(lo.target, mtimes=True) == before
    assert not (lo.target / "notes.txt").exists()
    # What the host did not touch applies.
    r, res = apply(lo, "gone", "--exclude", "notes.txt")
    assert r.returncode == 0, res
    assert (lo.target / "fresh.txt").read_text() == "new\n"
    assert not (lo.target / "notes.txt").exists()


def test_a_discarding_run_stopped_by_a_limit_is_kept_and_its_mv_over_a_host_edit_is_a_conflict(lo):
    """A limit keeps a discarding run's session too (stopped, not crashed):
    the same safe side."""
    (lo.target / "notes.default").write_text("defaults\n")
    _killed_discarding_run(lo, "lim", "true", "echo tuned >> notes.default && mv notes.default notes.txt",
                           _host_edits(lo), stopped=True)
    assert (lo.upper("lim") / "notes.txt").read_text() == "defaults\ntuned\n"
    assert status(lo, "lim")["notes.txt"]["stale"]
    r, res = apply(lo, "lim", "--exclude", "big*")
    assert r.returncode == 1 and [c["path"] for c in res["conflicts"]] == ["notes.txt"], res
    assert (lo.target / "notes.txt").read_text() == "the host's edit during the run\n"
